"""Default identity (helper quality82): the nine dev halves' ``find`` row of ``63c22bec``
(``git archive``, ``bench_natural.py --dev --rows find``) against this branch's (the
screen's, ``question_window_earned`` off): :mod:`find_row_identity` on the committed files.

    python bench/earned82_identity.py [BASE.json HEAD.json]
"""

from find_row_identity import main

main(("natural_earned82_base_find_nine_dev.json", "natural_earned82_screen_dev.json"))
