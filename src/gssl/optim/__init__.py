"""Shared numerics of the solvers (linear solves, PCG pieces, primal manifold machines, the TV /
Cheeger iterations, dictionary learning)."""

from .cheeger import cheeger_energy, cheeger_iteration
from .dictionary_learning import (AUTHORS_INNER, init_dictionary, knn_laplacian_operator,
                                  lasso_codes, lle_operator, lle_targets, out_of_sample_codes,
                                  update_dictionary)
from .dual_svm import DualSVMStep
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
from .ssdl_updates import SSDLModel, probability_update
from .tv import TVProx, rof_objective, rof_prox
from .tv_admm import ADMMRun, IterationLog, binary_split_admm, simplex_admm, sphere
from .tv_starts import (best_of_starts, eigenmap_start, label_start, multiclass_from_init,
                        pairwise_fiedler_refine, simplex_start)

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
    "rof_objective", "rof_prox", "TVProx", "ADMMRun", "IterationLog", "binary_split_admm",
    "simplex_admm", "sphere", "best_of_starts", "eigenmap_start", "label_start",
    "multiclass_from_init", "pairwise_fiedler_refine", "simplex_start", "cheeger_energy",
    "cheeger_iteration", "DualSVMStep", "AUTHORS_INNER", "init_dictionary",
    "knn_laplacian_operator", "lasso_codes", "lle_operator", "lle_targets",
    "out_of_sample_codes", "update_dictionary", "SSDLModel", "probability_update",
])
