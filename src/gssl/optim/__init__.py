"""Shared numerics of the solvers (linear solves, PCG pieces, primal manifold machines, the TV /
Cheeger iterations, dictionary learning)."""

# name -> the submodule defining it, imported on first use (PEP 562): importing one kernel module
# does not import them all (numba's import alone is 0.5 s of a job that never compiles anything)
_LAZY = {name: f"{__name__}.{module}" for module, names in {
    "cheeger": ("cheeger_energy", "cheeger_iteration"),
    "dictionary_learning": ("AUTHORS_INNER", "init_dictionary", "knn_laplacian_operator", "lasso_codes",
                            "lle_operator", "lle_targets", "out_of_sample_codes", "update_dictionary"),
    "dual_svm": ("DualSVMStep",),
    "fista": ("FistaResult", "fista", "l1_prox", "project_l2_ball", "soft_threshold"),
    "graph_ops": ("diffuse", "edge_list", "gradient_norm_bound", "gradient_operator",
                  "min_conductance_sweep", "total_variation"),
    "linalg": ("KernelSystem", "relative_residual", "solve_dense", "solve_spd", "symmetric_matvec"),
    "manifold_primal": ("LaplacianPower", "PrimalResult", "laprlsc_closed_form", "lapsvm_newton",
                        "lapsvm_newton_ova", "manifold_pcg", "primal_gradient", "primal_objective"),
    "mtv_step": ("MTVResult", "balance", "balance_subgradient", "discrete_energy", "lambda_median",
                 "mtv_energy", "mtv_minimize"),
    "pcg": ("STOPPING", "GradientNormCheck", "IterationState", "MixedCheck", "ObjectiveDecreaseCheck",
            "StabilityCheck", "StoppingCriterion", "ValidationCheck", "default_check_every",
            "make_criterion", "piecewise_quadratic_line_search", "polak_ribiere"),
    "qp": ("project_box_hyperplane", "qp_box_equality", "qp_diagonal", "qp_kkt_violation"),
    "simplex": ("project_simplex", "project_simplex_michelot", "project_simplex_rows",
                "theta_lower_bound"),
    "ssdl_updates": ("SSDLModel", "probability_update"),
    "tv": ("TVProx", "rof_objective", "rof_prox"),
    "tv_admm": ("ADMMRun", "IterationLog", "binary_split_admm", "simplex_admm", "sphere"),
    "tv_starts": ("best_of_starts", "eigenmap_start", "label_start", "multiclass_from_init",
                  "pairwise_fiedler_refine", "simplex_start"),
}.items() for name in names}


# fista is also its submodule's name, which the import system sets on this package once any code
# imports gssl.optim.fista: bound here (NumPy only), the name stays the function
from .fista import fista  # noqa: E402, F401


from .._package import lazy_attributes  # noqa: E402

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())


__all__ = sorted(_LAZY)
