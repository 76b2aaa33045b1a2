"""Complete deletion: `casework dataset forget` and `casework dataset expire` reach every store of customer data.

Entry points: :func:`forget_everywhere`, :func:`expire_everywhere`. :data:`TABLES` and
:data:`FILES` name every workbench table and every kind of file casework writes, with how a
deletion reaches it (or why it holds no customer data).
"""

from casework.erasure._everywhere import Erasure, expire_everywhere, forget_everywhere

__all__ = [
    "Erasure",
    "expire_everywhere",
    "forget_everywhere",
]
