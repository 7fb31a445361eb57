"""optzoo: the optimization methods of ICLR 2026, usable and checkable.

Each paper is a registered card (:mod:`optzoo.registry`); its method lives in an area package
(``optzoo.<area>``) and its reproduction runs with ``optzoo reproduce <slug>``.
"""

__version__ = "0.1.0"
