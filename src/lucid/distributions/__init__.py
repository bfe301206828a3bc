"""lucid.distributions: probability distributions with PyTorch's API (``torch.distributions``).

Each distribution has ``batch_shape`` and ``event_shape``, ``sample``/``rsample`` (reparameterized wherever
``has_rsample``: gradients flow to the parameters), ``log_prob``, ``entropy``, ``mean``/``mode``/``variance``/
``stddev``, ``cdf``/``icdf`` where defined, ``expand``, ``enumerate_support`` (discrete ones), ``support`` and
``arg_constraints``, with PyTorch's argument validation. ``transforms`` and ``TransformedDistribution`` build new
distributions from old ones; ``biject_to``/``transform_to`` map unconstrained reals onto a constraint;
``kl_divergence`` gives closed-form KL divergences. Samples are drawn from lucid's generator
(``lucid.manual_seed``).
"""
from . import constraints, transforms, utils
from .constraint_registry import biject_to, transform_to
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .transforms import *  # noqa: F401,F403
# the continuous univariate families
from .beta import Beta
from .cauchy import Cauchy
from .chi2 import Chi2
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .inverse_gamma import InverseGamma
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .normal import Normal
from .pareto import Pareto
from .relaxed_bernoulli import RelaxedBernoulli
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
# the discrete and multivariate families, and the combinators
from .bernoulli import Bernoulli
from .binomial import Binomial
from .categorical import Categorical
from .dirichlet import Dirichlet
from .geometric import Geometric
from .independent import Independent
from .kl import kl_divergence, register_kl
from .lkj_cholesky import LKJCholesky
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .wishart import Wishart

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
           "Distribution", "ExpRelaxedCategorical", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma",
           "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma",
           "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal",
           "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal",
           "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform", "VonMises", "Weibull",
           "Wishart", "biject_to", "kl_divergence", "register_kl",
           "transform_to"]
__all__.extend(transforms.__all__)
