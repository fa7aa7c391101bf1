// The kernels' shared constants and argument-block layouts, from kernels/geometry.cuh and
// kernels/args.cuh themselves (their X-macro lists), for Python to pack launches with.
#include <pybind11/pybind11.h>

#include <cstddef>
#include <initializer_list>

#include "bindings.h"

extern "C" {
#include "args.cuh"
}

namespace py = pybind11;

namespace gpukit {
namespace {

// (name, C type, byte offset, element bytes, shape: () for a value, (n,) or (rows, cols)).
#define GK_HOST_FIELD(T, NAME) \
    fields.append(py::make_tuple(#NAME, #T, offsetof(Self, NAME), sizeof(T), py::make_tuple()));
#define GK_HOST_ARRAY(T, NAME, COUNT) \
    fields.append(                    \
        py::make_tuple(#NAME, #T, offsetof(Self, NAME), sizeof(T), py::make_tuple(COUNT)));
#define GK_HOST_MATRIX(T, NAME, ROWS, COLS) \
    fields.append(                          \
        py::make_tuple(#NAME, #T, offsetof(Self, NAME), sizeof(T), py::make_tuple(ROWS, COLS)));
#define GK_HOST_STRUCT(NAME, FIELDS)                                                 \
    {                                                                                \
        using Self = NAME;                                                           \
        py::list fields;                                                             \
        FIELDS(GK_HOST_FIELD, GK_HOST_ARRAY, GK_HOST_MATRIX)                         \
        out[#NAME] = py::make_tuple(sizeof(Self), alignof(Self), py::tuple(fields)); \
    }

py::dict arg_layouts() {
    py::dict out;
    GK_ARG_STRUCTS(GK_HOST_STRUCT)
    return out;
}

// A constant is one value or a list of them (a table row): an int or a tuple of ints.
py::object constant_value(std::initializer_list<long long> values) {
    if (values.size() == 1) return py::int_(*values.begin());
    py::tuple row(values.size());
    size_t i = 0;
    for (long long v : values) row[i++] = py::int_(v);
    return std::move(row);
}

#define GK_HOST_CONSTANT(NAME) out[#NAME] = constant_value({NAME});

py::dict constants() {
    py::dict out;
    GK_CONSTANTS(GK_HOST_CONSTANT)
    return out;
}

}  // namespace

void bind_args(py::module_& m) {
    m.def(
        "constants", &constants,
        "Launch geometry shared by kernels and host (kernels/geometry.cuh), by macro name: an int, "
        "or a tuple of ints for a list of values.");
    m.def("arg_layouts", &arg_layouts,
          "Argument blocks of kernels/args.cuh: name -> (size, alignment, fields), each field "
          "(name, C type, offset, element size, shape).");
}

}  // namespace gpukit
