"""What each chapter shows, one module per chapter: its tables, glued values and figures.

A chapter's notebook keeps its checks and experiments visible and makes each
table, glue block or figure one call into ``symbreak.pages.chNN``. These modules
only arrange results that the layers above compute (forms, derivations,
symmetries, learning, experiments, performance); they hold no mathematics.
Import a chapter's module directly, ``from symbreak.pages import ch03``.
"""
