/* The cleaning kernels (filled in by the imputation and clipping steps). */
