"""Default identity (helper quality81): the nine dev halves' ``find`` row of ``61de7c96``
(``git archive``, ``bench_natural.py --dev --rows find``) against this branch's (the
screen's, ``question_weight_max`` off): :mod:`find_row_identity` on the committed files.

    python bench/wmax81_identity.py
"""

from find_row_identity import main

main(("natural_wmax81_base_find_nine_dev.json", "natural_wmax81_screen_dev.json"))
