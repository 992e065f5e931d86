"""stackmask: exact grammar-constrained decoding masks for LLMs.

    import stackmask
    vocab = stackmask.Vocab.qwen2_5()
    c = stackmask.Constraint(lark_text, vocab)
    s = c.start()
    mask = c.get_mask(s)          # packed int32 words, bit id%32 of word id//32
    s = c.commit(s, token_id)     # new state; raises TokenRejected, old state stays valid
    c.is_accepting(s)
"""

from .errors import GrammarError, LexerTooLarge, LimitExceeded, StackmaskError, TokenRejected
from .grammar import FreeText, LexerMode, Rule, TerminalDef
from .grammars import Grammar, grammar_from_json_schema, grammar_from_regex
from .limits import Limits
from .validate import Problem, ValidationReport, validate
from .runtime import Constraint, State
from .vocab import Vocab

__version__ = "0.1.0"

__all__ = [
    "Constraint", "State", "Vocab", "Grammar", "Rule", "TerminalDef", "FreeText", "LexerMode",
    "grammar_from_json_schema", "grammar_from_regex",
    "GrammarError", "TokenRejected", "StackmaskError", "LimitExceeded", "LexerTooLarge", "Limits",
    "validate", "ValidationReport", "Problem",
    "__version__",
]
