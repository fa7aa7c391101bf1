"""The fixed list of 174 NumPy functions that scripts commonly call (issue 19), by group, with
the reason for each one gpukit does not have yet or leaves out. tests/api/test_numpy_function_list.py
reports which are present; the README lists the rest."""

COMMON_NUMPY_FUNCTIONS = {
    "creation": (
        "array asarray ascontiguousarray copy zeros ones empty full zeros_like ones_like "
        "empty_like full_like arange linspace logspace geomspace eye identity meshgrid tri "
        "vander diag diagflat"
    ).split(),
    "shape": (
        "reshape ravel transpose swapaxes moveaxis squeeze expand_dims broadcast_to "
        "broadcast_arrays atleast_1d atleast_2d concatenate stack vstack hstack column_stack "
        "split array_split flip fliplr flipud roll rot90 repeat tile pad append delete tril triu "
        "diagonal"
    ).split(),
    "indexing": (
        "take take_along_axis where nonzero flatnonzero argwhere argmax argmin nanargmax "
        "nanargmin count_nonzero"
    ).split(),
    "elementwise": (
        "add subtract multiply divide floor_divide power mod remainder negative abs absolute sqrt "
        "square exp expm1 log log2 log10 log1p sin cos tan arcsin arccos arctan arctan2 sinh "
        "cosh tanh hypot floor ceil trunc round sign maximum minimum clip reciprocal isnan isinf "
        "isfinite nan_to_num deg2rad"
    ).split(),
    "logic": (
        "equal not_equal less less_equal greater greater_equal logical_and logical_or "
        "logical_not logical_xor isclose allclose array_equal all any bitwise_and bitwise_or"
    ).split(),
    "reductions": (
        "sum prod mean std var max min ptp cumsum cumprod diff average median percentile "
        "quantile nansum nanmean nanmax nanmin nanstd nanvar nanmedian histogram bincount "
        "digitize cov corrcoef"
    ).split(),
    "linalg": "dot matmul inner outer tensordot einsum kron trace cross".split(),
    "sorting_sets": "sort argsort unique searchsorted isin intersect1d setdiff1d".split(),
    "numerical": "interp convolve gradient polyval polyfit".split(),
}

ALL = [name for group in COMMON_NUMPY_FUNCTIONS.values() for name in group]

# Why each absent function is absent: the work it waits for.
WAITING = {
    **dict.fromkeys(
        "expm1 log2 log10 log1p tan arcsin arccos arctan arctan2 sinh cosh hypot trunc round "
        "reciprocal isnan isinf isfinite deg2rad".split(),
        "a new elementwise kernel (after the runtime core restructure, issue 12)",
    ),
    **dict.fromkeys(
        "median percentile quantile nanmedian histogram bincount digitize sort argsort unique "
        "searchsorted isin intersect1d setdiff1d interp".split(),
        "GPU sorting and searching (issue 19, branch sort)",
    ),
    "polyfit": "a least-squares solver (the linear-algebra issue)",
}
