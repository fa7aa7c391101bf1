// DLPack capsules: exporting gpukit memory (the capsule keeps the exporting array alive until the
// consumer calls the deleter) and taking a producer's tensor (a keeper object calls the producer's
// deleter when gpukit no longer needs the memory).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "bindings.h"
#include "dlpack.h"

namespace py = pybind11;
using gpukit::dlpack::ManagedTensor;

namespace {

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";

// What an exported tensor owns: its shape and strides, and a reference to the exporting object.
struct Export {
    ManagedTensor tensor{};
    std::vector<int64_t> shape, strides;
    PyObject* owner = nullptr;
};

void delete_export(ManagedTensor* self) {
    auto* e = static_cast<Export*>(self->manager_ctx);
    // Consumers may call the deleter from any thread, with or without the GIL.
    const PyGILState_STATE gil = PyGILState_Ensure();
    Py_XDECREF(e->owner);
    PyGILState_Release(gil);
    delete e;
}

// A capsule nobody consumed still owns its tensor.
void destroy_capsule(PyObject* capsule) {
    if (PyCapsule_IsValid(capsule, kUsedCapsuleName)) return;
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    auto* tensor = static_cast<ManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
    if (tensor == nullptr) {
        PyErr_WriteUnraisable(capsule);
    } else if (tensor->deleter != nullptr) {
        tensor->deleter(tensor);
    }
    PyErr_Restore(type, value, traceback);
}

py::object export_tensor(py::object owner, uint64_t address, std::vector<int64_t> shape,
                         std::vector<int64_t> strides, int type_code, int bits, int device_type,
                         int device_id) {
    if (shape.size() != strides.size()) throw py::value_error("shape and strides differ in length");
    auto* e = new Export();
    e->shape = std::move(shape);
    e->strides = std::move(strides);
    auto& t = e->tensor.dl_tensor;
    t.data = reinterpret_cast<void*>(static_cast<uintptr_t>(address));
    t.device = {device_type, device_id};
    t.ndim = static_cast<int32_t>(e->shape.size());
    t.dtype = {static_cast<uint8_t>(type_code), static_cast<uint8_t>(bits), 1};
    t.shape = e->shape.data();
    t.strides = e->strides.data();
    t.byte_offset = 0;
    e->tensor.manager_ctx = e;
    e->tensor.deleter = delete_export;
    e->owner = owner.release().ptr();
    PyObject* capsule = PyCapsule_New(&e->tensor, kCapsuleName, destroy_capsule);
    if (capsule == nullptr) {
        delete_export(&e->tensor);
        throw py::error_already_set();
    }
    return py::reinterpret_steal<py::object>(capsule);
}

void release_import(void* pointer) {
    auto* tensor = static_cast<ManagedTensor*>(pointer);
    if (tensor->deleter != nullptr) tensor->deleter(tensor);
}

py::tuple import_tensor(py::object capsule) {
    auto* m = static_cast<ManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
    if (m == nullptr) throw py::error_already_set();
    const auto& t = m->dl_tensor;
    if (t.ndim < 0) throw py::value_error("DLPack tensor with a negative ndim");
    std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
    std::optional<std::vector<int64_t>> strides;
    if (t.strides != nullptr && t.ndim > 0) strides.emplace(t.strides, t.strides + t.ndim);
    const uint64_t address =
        static_cast<uint64_t>(reinterpret_cast<uintptr_t>(t.data)) + t.byte_offset;
    // From here on the producer's memory is released by the keeper, not by the capsule.
    py::capsule keeper(m, release_import);
    if (PyCapsule_SetName(capsule.ptr(), kUsedCapsuleName) != 0) {
        PyCapsule_SetDestructor(keeper.ptr(), nullptr);
        throw py::error_already_set();
    }
    return py::make_tuple(address, shape, strides, t.dtype.code, t.dtype.bits, t.dtype.lanes,
                          t.device.device_type, t.device.device_id, keeper);
}

}  // namespace

void gpukit::bind_dlpack(py::module_& m) {
    m.def("dlpack_export", &export_tensor, py::arg("owner"), py::arg("address"), py::arg("shape"),
          py::arg("strides"), py::arg("type_code"), py::arg("bits"), py::arg("device_type"),
          py::arg("device_id"),
          "A DLPack capsule over `address` (strides in elements) that keeps `owner` alive until "
          "the consumer is done.");
    m.def("dlpack_import", &import_tensor, py::arg("capsule"),
          "(address, shape, strides or None, type code, bits, lanes, device type, device id, "
          "keeper) of a DLPack capsule, which is marked used; the producer's memory stays valid "
          "while `keeper` lives.");
}
