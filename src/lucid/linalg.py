"""lucid.linalg: PyTorch's torch.linalg names. Declared in ``lucid.ops.decomp`` (and ``lucid.ops.linalg``), the LU
family in ``lucid.ops.linalg_lu``, LDL^T in ``lucid.ops.linalg_ldl``, the rest in ``lucid.ops.linalg_extra`` and ``lucid.ops.householder``."""
from .ops.decomp import *  # noqa: F401,F403
from .ops.householder import householder_product  # noqa: F401
from .ops.linalg_extra import (cond, eig, eigvals, linalg_cross as cross, linalg_diagonal as diagonal,  # noqa: F401
                               matrix_exp, tensorinv, tensorsolve, vander)
from .ops.linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve  # noqa: F401
from .ops.linalg_lu import LinAlgError, lu, lu_factor, lu_factor_ex, lu_solve, solve_ex  # noqa: F401
