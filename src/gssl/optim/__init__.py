"""Shared numerics of the solvers (linear solves, PCG pieces, primal manifold machines)."""

from .fista import FistaResult, fista, l1_prox, project_l2_ball, soft_threshold
from .graph_ops import (diffuse, edge_list, gradient_norm_bound, gradient_operator,
                        min_conductance_sweep, total_variation)
from .linalg import relative_residual, solve_dense, solve_spd, symmetric_matvec
from .manifold_primal import (LaplacianPower, PrimalResult, laprlsc_closed_form, lapsvm_newton,
                              lapsvm_newton_ova, manifold_pcg, primal_gradient, primal_objective)
from .mtv_step import (MTVResult, balance, balance_subgradient, discrete_energy,
                       lambda_median, mtv_energy, mtv_minimize)
from .pcg import (STOPPING, GradientNormCheck, IterationState, MixedCheck, ObjectiveDecreaseCheck,
                  StabilityCheck, StoppingCriterion, ValidationCheck, default_check_every,
                  make_criterion, piecewise_quadratic_line_search, polak_ribiere)
from .qp import project_box_hyperplane, qp_box_equality, qp_diagonal, qp_kkt_violation
from .simplex import (project_simplex, project_simplex_michelot, project_simplex_rows,
                      theta_lower_bound)
from .tv import rof_objective, rof_prox

__all__ = sorted([
    "FistaResult", "fista", "l1_prox", "project_l2_ball", "soft_threshold", "edge_list",
    "gradient_norm_bound", "gradient_operator", "total_variation", "relative_residual",
    "solve_dense", "solve_spd", "symmetric_matvec", "LaplacianPower", "PrimalResult",
    "laprlsc_closed_form",
    "lapsvm_newton", "lapsvm_newton_ova", "manifold_pcg", "primal_gradient", "primal_objective",
    "MTVResult", "balance",
    "balance_subgradient", "diffuse", "discrete_energy", "lambda_median", "min_conductance_sweep",
    "mtv_energy",
    "mtv_minimize", "STOPPING", "GradientNormCheck", "IterationState", "MixedCheck",
    "ObjectiveDecreaseCheck", "StabilityCheck", "StoppingCriterion", "ValidationCheck",
    "default_check_every", "make_criterion", "piecewise_quadratic_line_search", "polak_ribiere",
    "project_box_hyperplane", "qp_box_equality", "qp_diagonal", "qp_kkt_violation",
    "project_simplex", "project_simplex_michelot", "project_simplex_rows", "theta_lower_bound",
    "rof_objective", "rof_prox",
])
