"""gpukit's base layer: dtypes and promotion, shapes and strides, sizes and configuration. Pure
Python and NumPy: nothing here touches a device (errors live in gpukit.errors)."""
