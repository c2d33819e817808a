/* Fused elementwise gradients: one pass over memory where numpy needs several.
 *
 * tanh's gradient g * (1 - y^2) is taken as g * (2a - a^2) with a = 1 - |y| (see
 * engine/ops/elementwise.py for why that rounds as PyTorch's fused multiply-add does).
 * In numpy that is six passes over the arrays, each a call and a sweep of memory; at
 * 64x64 they cost four times PyTorch's one kernel. This loop does the same IEEE
 * operations in the same order, element by element, so its bits are the numpy passes'
 * bits: the build turns off floating-point contraction (-ffp-contract=off), which would
 * otherwise fuse a*a into the subtraction on machines with FMA and round differently.
 *
 * The extension is optional: without a C compiler the engine runs the numpy passes.
 * Only the buffer protocol is used, so building needs Python's headers and nothing else.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif
#if defined(_MSC_VER) && !defined(__clang__)
#define restrict __restrict /* MSVC's C compiler spells C99's restrict so */
#endif

/* A C-contiguous buffer of float64 (format "d"), or an exception set and -1. */
static int
float64_buffer(PyObject *obj, Py_buffer *view, int writable, const char *what)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        return -1;
    }
    if (view->itemsize != sizeof(double) || view->format == NULL
        || strcmp(view->format, "d") != 0) {
        PyErr_Format(PyExc_TypeError, "%s must hold float64, not format '%s'", what,
                     view->format ? view->format : "B");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static void
tanh_grad_loop(const double *restrict g, const double *restrict y,
               double *restrict out, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        double a = 1.0 - fabs(y[i]);
        double r = (a + a) - a * a;
        out[i] = r * g[i];
    }
}

/* Whether two buffers share any byte. */
static int
overlap(const Py_buffer *a, const Py_buffer *b)
{
    const char *p = a->buf, *q = b->buf;
    return p < q + b->len && q < p + a->len;
}

static PyObject *
tanh_grad(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer g, y, out;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "tanh_grad takes 3 arguments (g, y, out), got %zd",
                     nargs);
        return NULL;
    }
    if (float64_buffer(args[0], &g, 0, "g") < 0) {
        return NULL;
    }
    if (float64_buffer(args[1], &y, 0, "y") < 0) {
        PyBuffer_Release(&g);
        return NULL;
    }
    if (float64_buffer(args[2], &out, 1, "out") < 0) {
        PyBuffer_Release(&g);
        PyBuffer_Release(&y);
        return NULL;
    }
    PyObject *result = NULL;
    if (g.len != y.len || out.len != y.len) {
        PyErr_SetString(PyExc_ValueError, "g, y and out must have the same size");
    }
    else if (overlap(&out, &g) || overlap(&out, &y)) {
        PyErr_SetString(PyExc_ValueError, "out must not share memory with g or y");
    }
    else {
        tanh_grad_loop(g.buf, y.buf, out.buf, y.len / (Py_ssize_t)sizeof(double));
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&g);
    PyBuffer_Release(&y);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef fused_methods[] = {
    {"tanh_grad", (PyCFunction)(void (*)(void))tanh_grad, METH_FASTCALL,
     "tanh_grad(g, y, out): out = g * (1 - y*y), as (2a - a*a) * g with a = 1 - |y|.\n\n"
     "Three C-contiguous float64 buffers of one size; out is written, not returned."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef fused_module = {
    PyModuleDef_HEAD_INIT, "_fused",
    "Fused elementwise gradients, bit for bit the numpy passes they replace.", -1,
    fused_methods,
};

PyMODINIT_FUNC
PyInit__fused(void)
{
    return PyModule_Create(&fused_module);
}
