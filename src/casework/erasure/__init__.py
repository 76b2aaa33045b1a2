"""Complete deletion: `casework dataset forget` and `casework dataset expire` reach every store of customer data.

Entry points: :func:`forget_everywhere`, :func:`expire_everywhere`. :data:`TABLES` and
:data:`FILES` name every workbench table and every kind of file casework writes, with how a
deletion reaches it (or why it holds no customer data).
"""

from casework.erasure._everywhere import (
    OUT_OF_REACH,
    Erasure,
    StoreCount,
    expire_everywhere,
    forget_everywhere,
)
from casework.erasure._registry import FILES, TABLES, FileKind, Reach, TableStore

__all__ = [
    "FILES",
    "OUT_OF_REACH",
    "TABLES",
    "Erasure",
    "FileKind",
    "Reach",
    "StoreCount",
    "TableStore",
    "expire_everywhere",
    "forget_everywhere",
]
