// empty: the kernels include <cublas_v2.h> but call nothing of it (the build needs no cuBLAS)
