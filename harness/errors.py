"""The harness's handled errors: printed as one line naming where and what, never a traceback."""


class HarnessError(Exception):
    """Base of every error the CLI prints plainly and turns into exit status 2."""


class ContractError(HarnessError):
    """A contract, coverage or expectations file that is malformed or impossible."""


class CaseIdError(HarnessError):
    """A string that is not a canonical case id."""


class JournalError(HarnessError):
    """A journal that cannot be read or written."""


class ExpectationError(HarnessError):
    """Expired or unmatched expectations, listed in the message."""


class Interrupted(Exception):
    """A run stopped by an interrupt (Ctrl-C): nothing charged for it, its journals resumable; exit status 130."""
