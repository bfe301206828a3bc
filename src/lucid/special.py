"""lucid.special: PyTorch's torch.special names (the gamma family, the error and normal functions, Bessel and Airy
functions, orthogonal polynomials, and the elementwise and softmax functions PyTorch repeats here). Each is the
same object as lucid's own where the function is the same (``lucid.special.gammaln is lucid.lgamma``,
``lucid.special.expit is lucid.sigmoid``); they are declared in ``lucid.ops.special_fns``, ``lucid.ops.polynomials``,
``lucid.ops.elementwise`` and ``lucid.ops.reduce``."""
from .ops._core import accepts_out
from .ops.elementwise import erf, erfc, erfinv, exp2, expm1, log1p, round, sinc, xlogy  # noqa: F401
from .ops.elementwise import sigmoid as expit  # noqa: F401
from .ops.polynomials import (chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v,  # noqa: F401
                              chebyshev_polynomial_w, hermite_polynomial_h, hermite_polynomial_he,
                              laguerre_polynomial_l, legendre_polynomial_p, shifted_chebyshev_polynomial_t,
                              shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
                              shifted_chebyshev_polynomial_w)
from .ops.reduce import log_softmax, logsumexp, softmax  # noqa: F401
from .ops.special_fns import (airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, digamma, entr, erfcx,  # noqa: F401
                              i0, i0e, i1, i1e, log_ndtr, logit, modified_bessel_i0, modified_bessel_i1,
                              modified_bessel_k0, modified_bessel_k1, ndtr, ndtri, polygamma,
                              scaled_modified_bessel_k0, scaled_modified_bessel_k1, spherical_bessel_j0, xlog1py,
                              zeta)
from .ops.special_fns import igamma as gammainc, igammac as gammaincc, lgamma as gammaln  # noqa: F401
from .ops.special_fns import mvlgamma as multigammaln  # noqa: F401

psi = digamma
xlogy = accepts_out(xlogy)  # the same wrapper as lucid.xlogy (PyTorch's out= on a plain function)
logsumexp = accepts_out(logsumexp)
softmax, log_softmax = accepts_out(softmax), accepts_out(log_softmax)
round = accepts_out(round)  # noqa: A001

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
           "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]
