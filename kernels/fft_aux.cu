// The FFT's passes besides the transform itself (gk_fft_aux_args), grid-stride loops over the
// contiguous output: widening real or Hermitian input to complex rows, the real part, the pre-
// and post-processing of real transforms done as complex ones of half the length, and
// Bluestein's chirp-z steps for lengths with large prime factors:
//   X[k] = w[k] * sum_j (x[j] w[j]) conj(w[k - j]),  w[j] = exp(-i pi j^2 / n),
// the convolution taken by FFTs of a power-of-two length m >= 2n - 1.
#include "fft.cuh"

#define GK_FFT_GRID_LOOP(idx, total)                                                      \
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < (total); \
         idx += (long long)gridDim.x * blockDim.x)

// idx / w (the row) and idx % w (the element).
struct gk_aux_at {
    long long row, k;
};
GK_DEV gk_aux_at gk_aux_split(long long idx, long long w) {
    const long long row = gk_fft_quot(idx, w);
    return {row, idx - row * w};
}

// exp(-2 pi i k / n) for 0 <= k < n, inv = 1 / n: where n is a power of two, k inv is exact and
// the product gives gk_twiddle's bits without its double division; else gk_twiddle itself.
GK_DEV gk_cpx gk_aux_twiddle(long long k, long long n, double inv) {
    return (n & (n - 1)) == 0 ? gk_twiddle_inv(k, inv) : gk_twiddle(k, n);
}

GK_DEV long long gk_aux_in(const gk_fft_aux_args& a, long long row, long long j) {
    return gk_fft_row_offset(row, a.batch_ndim, a.batch_shape, a.in_batch) + j * a.in_step;
}

// exp(-i pi j^2 / n): j^2 is reduced modulo 2n exactly first.
GK_DEV gk_cpx gk_chirp(long long j, long long n) {
    const unsigned long long n2 = 2ull * (unsigned long long)n;
    const unsigned long long jj = (unsigned long long)j % n2;
    return gk_twiddle((long long)(jj * jj % n2), (long long)n2);
}

// out (rows, n) complex = in (rows, n) real.
GK_FFT_KERNEL void gk_fft_expand_real(const gk_fft_aux_args a) {
    const gk_real* in = (const gk_real*)a.in;
    gk_cpx* out = (gk_cpx*)a.out;
    GK_FFT_GRID_LOOP(idx, a.rows * a.n) {
        const gk_aux_at at = gk_aux_split(idx, a.n);
        const long long row = at.row, j = at.k;
        out[idx] = gk_cx(in[gk_aux_in(a, row, j)], (gk_real)0);
    }
}

// out (rows, n) = the Hermitian extension of in's n / 2 + 1 values per row.
GK_FFT_KERNEL void gk_fft_expand_herm(const gk_fft_aux_args a) {
    const gk_cpx* in = (const gk_cpx*)a.in;
    gk_cpx* out = (gk_cpx*)a.out;
    const long long half = a.n / 2 + 1;
    GK_FFT_GRID_LOOP(idx, a.rows * a.n) {
        const gk_aux_at at = gk_aux_split(idx, a.n);
        const long long row = at.row, j = at.k;
        out[idx] = j < half ? in[gk_aux_in(a, row, j)] : gk_conj(in[gk_aux_in(a, row, a.n - j)]);
    }
}

// out (rows, n) real = the real part of in (rows, n), contiguous.
GK_FFT_KERNEL void gk_fft_real_part(const gk_fft_aux_args a) {
    const gk_cpx* in = (const gk_cpx*)a.in;
    gk_real* out = (gk_real*)a.out;
    GK_FFT_GRID_LOOP(idx, a.rows * a.n) { out[idx] = in[idx].re; }
}

// Real input of even length n read as h = n / 2 complex values z and transformed to Z (in,
// contiguous (rows, h)); out (rows, h + 1) = X, the real input's transform, scaled:
//   X[k] = E[k] + exp(-2 pi i k / n) O[k],  E = (Z[k] + conj Z[h - k]) / 2,
//   O = (Z[k] - conj Z[h - k]) / 2i  (Z[h] is Z[0]).
GK_FFT_KERNEL void gk_fft_r2c_post(const gk_fft_aux_args a) {
    const gk_cpx* in = (const gk_cpx*)a.in;
    gk_cpx* out = (gk_cpx*)a.out;
    const long long h = a.n / 2;
    const gk_real half = (gk_real)0.5 * (gk_real)a.scale;
    const double inv = 1.0 / (double)a.n;
    GK_FFT_GRID_LOOP(idx, a.rows * (h + 1)) {
        const gk_aux_at at = gk_aux_split(idx, h + 1);
        const long long row = at.row, k = at.k;
        const gk_cpx* z = in + row * h;
        const gk_cpx zk = z[k == h ? 0 : k], zc = gk_conj(z[k == 0 ? 0 : h - k]);
        const gk_cpx e = zk + zc, o = gk_mul_neg_i(zk - zc);
        out[idx] = gk_scale(e + gk_aux_twiddle(k, a.n, inv) * o, half);
    }
}

// The inverse: in (rows, h + 1) strided, X a Hermitian half-spectrum (the imaginary parts of X[0]
// and X[h] ignored, as NumPy does); out (rows, h) = Z = 2E + 2i O, whose unscaled inverse
// transform of length h is the real result read as pairs.
GK_FFT_KERNEL void gk_fft_c2r_pre(const gk_fft_aux_args a) {
    const gk_cpx* in = (const gk_cpx*)a.in;
    gk_cpx* out = (gk_cpx*)a.out;
    const long long h = a.n / 2;
    const double inv = 1.0 / (double)a.n;
    GK_FFT_GRID_LOOP(idx, a.rows * h) {
        const gk_aux_at at = gk_aux_split(idx, h);
        const long long row = at.row, k = at.k;
        gk_cpx xk = in[gk_aux_in(a, row, k)];
        gk_cpx xc = gk_conj(in[gk_aux_in(a, row, h - k)]);
        if (k == 0) xk.im = 0, xc.im = 0;
        const gk_cpx e = xk + xc, o = gk_conj(gk_aux_twiddle(k, a.n, inv)) * (xk - xc);
        out[idx] = gk_cx(e.re - o.im, e.im + o.re);  // e + i o
    }
}

// Bluestein, step 1: out (rows, m) = x[j] w[j] for j < n (x conjugated first when a.conj), zeros
// after.
GK_FFT_KERNEL void gk_fft_chirp_pre(const gk_fft_aux_args a) {
    const gk_cpx* in = (const gk_cpx*)a.in;
    gk_cpx* out = (gk_cpx*)a.out;
    GK_FFT_GRID_LOOP(idx, a.rows * a.m) {
        const gk_aux_at at = gk_aux_split(idx, a.m);
        const long long row = at.row, j = at.k;
        gk_cpx v = gk_cx((gk_real)0, (gk_real)0);
        if (j < a.n) {
            const gk_cpx x = in[gk_aux_in(a, row, j)];
            v = (a.conj ? gk_conj(x) : x) * gk_chirp(j, a.n);
        }
        out[idx] = v;
    }
}

// Step 2: out (m) = the filter conj(w[j]) at j and m - j for j < n, zeros between.
GK_FFT_KERNEL void gk_fft_chirp_filter(const gk_fft_aux_args a) {
    gk_cpx* out = (gk_cpx*)a.out;
    GK_FFT_GRID_LOOP(j, a.m) {
        gk_cpx v = gk_cx((gk_real)0, (gk_real)0);
        if (j < a.n)
            v = gk_conj(gk_chirp(j, a.n));
        else if (j > a.m - a.n)
            v = gk_conj(gk_chirp(a.m - j, a.n));
        out[j] = v;
    }
}

// Step 3: out (rows, m) = conj(in * filter), whose forward transform is the conjugated
// unscaled inverse transform of the product (the circular convolution times m).
GK_FFT_KERNEL void gk_fft_chirp_mul(const gk_fft_aux_args a) {
    const gk_cpx* in = (const gk_cpx*)a.in;
    const gk_cpx* filter = (const gk_cpx*)a.filter;
    gk_cpx* out = (gk_cpx*)a.out;
    GK_FFT_GRID_LOOP(idx, a.rows * a.m) {
        out[idx] = gk_conj(in[idx] * filter[gk_aux_split(idx, a.m).k]);
    }
}

// Step 4: out (rows, n) = w[k] conj(in[k]) * scale (scale includes 1 / m), conjugated when a.conj.
GK_FFT_KERNEL void gk_fft_chirp_post(const gk_fft_aux_args a) {
    const gk_cpx* in = (const gk_cpx*)a.in;
    gk_cpx* out = (gk_cpx*)a.out;
    GK_FFT_GRID_LOOP(idx, a.rows * a.n) {
        const gk_aux_at at = gk_aux_split(idx, a.n);
        const long long row = at.row, k = at.k;
        const gk_cpx v = gk_chirp(k, a.n) * gk_conj(in[row * a.m + k]);
        out[idx] = gk_scale(a.conj ? gk_conj(v) : v, (gk_real)a.scale);
    }
}
