package core

// The C exchange API of DLPack 1.3 (dlpack.h: DLPackExchangeAPIHeader, DLPackExchangeAPI). A Python
// framework publishes one static table per tensor type, as the type attribute
// __dlpack_c_exchange_api__ (a PyCapsule named "dlpack_exchange_api" whose pointer is the table), so
// that compiled consumers exchange tensors through C calls instead of __dlpack__ and capsules. The
// entries are C function pointers, held here as uintptr (0 for NULL); Go cannot call them itself.

// ExchangeAPICapsuleName is the name of the PyCapsule that holds a *DLPackExchangeAPI.
const ExchangeAPICapsuleName = "dlpack_exchange_api"

// ExchangeAPIAttr is the Python type attribute that holds the capsule.
const ExchangeAPIAttr = "__dlpack_c_exchange_api__"

// DLPackExchangeAPIHeader is the part of the table that stays stable across versions (16 bytes):
// the DLPack version the table implements, and PrevAPI, an older table of the same framework or
// nil. A consumer checks Version.Major before it touches anything else, and may walk PrevAPI to a
// major version it understands.
type DLPackExchangeAPIHeader struct {
	Version DLPackVersion
	PrevAPI *DLPackExchangeAPIHeader
}

// DLPackExchangeAPI is the table of a 1.x producer (56 bytes). The C signatures of its entries
// (void* stands for PyObject*; int results are 0 on success, -1 on failure with a Python
// exception set):
//
//	ManagedTensorAllocator: int (*)(DLTensor* prototype, DLManagedTensorVersioned** out,
//	    void* error_ctx, void (*SetError)(void* error_ctx, const char* kind, const char* message))
//	    A new tensor of prototype's dtype, ndim, shape and device; on failure SetError is called
//	    (exactly then), not the Python API. Required.
//	ManagedTensorFromPyObjectNoSync: int (*)(void* py_object, DLManagedTensorVersioned** out)
//	    An owning managed tensor over py_object's memory (BufferError if it cannot be described),
//	    without stream synchronization. Required.
//	ManagedTensorToPyObjectNoSync: int (*)(DLManagedTensorVersioned* tensor, void** out_py_object)
//	    A tensor of the producer's type over tensor, whose ownership it takes. Required.
//	DLTensorFromPyObjectNoSync: int (*)(void* py_object, DLTensor* out)
//	    A non-owning descriptor, valid until control returns to the producer. Optional (0).
//	CurrentWorkStream: int (*)(DLDeviceType device_type, int32_t device_id, void** out_current_stream)
//	    The stream the producer currently works on (NULL on CPU), for a consumer that launches
//	    its own work in the producer's order. Required.
type DLPackExchangeAPI struct {
	Header                          DLPackExchangeAPIHeader
	ManagedTensorAllocator          uintptr
	ManagedTensorFromPyObjectNoSync uintptr
	ManagedTensorToPyObjectNoSync   uintptr
	DLTensorFromPyObjectNoSync      uintptr
	CurrentWorkStream               uintptr
}
