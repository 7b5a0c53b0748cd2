"""A stand-in for the few parts of torch that flashtune.attention calls, so its call path runs (to
the C call) on a machine without PyTorch or a GPU: tensors with shapes, strides and pointers but no
data; torch.empty/empty_strided; autograd.Function's Python half; torch.cuda's device switching
and current stream, as torch 2.x has them (modern=True) or through its context manager only.
Used by test_cpu.py and python/bench/overhead.py. The costs are Python calls' costs, not torch's."""
import types


class Dtype:
    def __init__(self, name, size):
        self.name, self.itemsize = name, size

    def __str__(self):
        return "torch." + self.name

    __repr__ = __str__


class Device:
    __slots__ = ("type", "index")

    def __init__(self, kind, index=0):
        self.type, self.index = kind, index

    def __eq__(self, other):
        return isinstance(other, Device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __repr__(self):
        return f"{self.type}:{self.index}"


def contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.insert(0, acc)
        acc *= max(n, 1)
    return tuple(strides)


class Tensor:
    """torch.Tensor's interface as flashtune uses it, on the class as torch's is; properties where
    torch builds an object per read."""
    __slots__ = ("_shape", "_stride", "_dtype", "_device", "_ptr", "requires_grad", "_version", "__weakref__")
    _next_ptr = 1 << 32

    def __init__(self, shape, dtype, device, stride=None, offset=0):
        self._shape, self._dtype, self._device = tuple(shape), dtype, device
        self._version = 0   # torch's counter of in-place writes (a test bumps it by hand)
        self._stride = tuple(stride) if stride is not None else contiguous_strides(shape)
        self._ptr = Tensor._next_ptr + offset
        Tensor._next_ptr += 1 << 20
        self.requires_grad = True   # as a model's activations: attention() goes through autograd

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    device = property(lambda self: self._device)

    def stride(self):
        return self._stride

    def dim(self):
        return len(self._shape)

    def data_ptr(self):
        return self._ptr

    def element_size(self):
        return self._dtype.itemsize

    is_cuda = property(lambda self: self._device.type == "cuda")

    def get_device(self):
        return self._device.index if self._device.type == "cuda" else -1

    def new_empty(self, size, dtype=None):
        return Tensor(size, dtype or self._dtype, self._device)

    def new_empty_strided(self, size, stride, dtype=None):
        return Tensor(size, dtype or self._dtype, self._device, stride)

    def contiguous(self):
        if self._stride == contiguous_strides(self._shape):
            return self
        return Tensor(self._shape, self._dtype, self._device)

    def is_floating_point(self):
        return self._dtype.name.startswith(("float", "bfloat"))

    def to(self, dtype):
        """This tensor in dtype: itself, or a converted copy (a new pointer)."""
        return self if dtype is self._dtype else Tensor(self._shape, dtype, self._device)

    def _view(self, shape, stride):
        t = Tensor(shape, self._dtype, self._device, stride)
        t._ptr = self._ptr
        return t

    def unsqueeze(self, dim):
        """A view with a dimension of 1 inserted at dim (0 <= dim <= rank)."""
        inner = self._stride[dim] * self._shape[dim] if dim < len(self._shape) else 1
        return self._view(self._shape[:dim] + (1,) + self._shape[dim:],
                          self._stride[:dim] + (inner,) + self._stride[dim:])

    def copy_(self, src):
        """In place: the data is not modelled, so this tensor as it is."""
        return self

    def transpose(self, a, b):
        """A view with dimensions a and b swapped."""
        shape, stride = list(self._shape), list(self._stride)
        shape[a], shape[b], stride[a], stride[b] = shape[b], shape[a], stride[b], stride[a]
        return self._view(tuple(shape), tuple(stride))

    def squeeze(self, dim):
        """A view without dimension dim, which must be 1."""
        assert self._shape[dim] == 1
        return self._view(self._shape[:dim] + self._shape[dim + 1:], self._stride[:dim] + self._stride[dim + 1:])

    def __getitem__(self, key):
        """t[..., :n] only: a view of the first n elements of the last dimension."""
        assert isinstance(key, tuple) and key[0] is Ellipsis and key[1].start is None and key[1].step is None
        return self._view(self._shape[:-1] + (key[1].stop,), self._stride)

    def reshape(self, shape):
        """A view of a contiguous tensor, else a contiguous copy (a new pointer); one -1 allowed."""
        shape = tuple(shape)
        if -1 in shape:
            known = 1
            for n in shape:
                known *= n if n != -1 else 1
            total = 1
            for n in self._shape:
                total *= n
            shape = tuple(total // known if n == -1 else n for n in shape)
        if self._stride == contiguous_strides(self._shape):
            return self._view(shape, contiguous_strides(shape))
        return Tensor(shape, self._dtype, self._device)


class FunctionCtx:
    def save_for_backward(self, *tensors):
        self._saved = tensors

    @property
    def saved_tensors(self):
        return self._saved


class Function:
    """The Python half of torch.autograd.Function.apply (torch 2.x): a pass over the arguments
    (unwrap_dead_wrappers), then forward on a fresh ctx, kept in last_ctx for a backward call."""
    last_ctx = None

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args):
        if cls.setup_context != Function.setup_context:
            raise NotImplementedError
        args = tuple(a if isinstance(a, Tensor) else a for a in args)
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and bool(a.requires_grad) for a in args)
        out = cls.forward(ctx, *args)
        Function.last_ctx = ctx
        return out


def make_torch(modern=True):
    """A torch module. `torch.device_log` records each device switch as ("set", index)."""
    torch = types.ModuleType("torch")
    torch.Tensor = Tensor
    torch.float32, torch.float64 = Dtype("float32", 4), Dtype("float64", 8)
    torch.float16, torch.bfloat16 = Dtype("float16", 2), Dtype("bfloat16", 2)
    torch.int32, torch.int64, torch.uint8 = Dtype("int32", 4), Dtype("int64", 8), Dtype("uint8", 1)
    torch.device = Device
    torch.autograd = types.SimpleNamespace(Function=Function)
    torch.device_log = []
    state = {"device": 0}
    # torch.use_deterministic_algorithms's flag, set by the tests through torch.deterministic
    torch.deterministic = False
    torch.are_deterministic_algorithms_enabled = lambda: torch.deterministic
    torch.grad_enabled = True   # torch.is_grad_enabled's flag, set by the tests
    torch.is_grad_enabled = lambda: torch.grad_enabled

    def empty(size, *, dtype, device):
        return Tensor(size, dtype, device)

    def empty_strided(size, stride, *, dtype, device):
        return Tensor(size, dtype, device, stride)

    torch.empty, torch.empty_strided = empty, empty_strided
    torch.empty_like = lambda t: Tensor(t.shape, t.dtype, t.device)

    def pad(t, widths):   # torch.nn.functional.pad of the last dimension, (0, n) only: a new tensor
        assert len(widths) == 2 and widths[0] == 0
        return Tensor(t.shape[:-1] + (t.shape[-1] + widths[1],), t.dtype, t.device)

    # scaled_dot_product_attention: records its call (args, keywords) in torch.sdpa_calls, returns a tensor
    # shaped as SDPA's output
    torch.sdpa_calls = []

    def sdpa(query, key, value, **kw):
        torch.sdpa_calls.append(((query, key, value), kw))
        return Tensor(tuple(query.shape[:-1]) + (value.shape[-1],), query.dtype, query.device)

    torch.nn = types.SimpleNamespace(functional=types.SimpleNamespace(pad=pad, scaled_dot_product_attention=sdpa))

    def get_device_index(device, optional=False):
        return device.index if isinstance(device, Device) else device

    def exchange_device(index):   # torch._C._cuda_exchangeDevice
        prev = state["device"]
        if index != prev:
            state["device"] = index
            torch.device_log.append(("set", index))
        return prev

    def raw_stream(index):   # torch._C._cuda_getCurrentRawStream
        return 0x7f0000001000 + 0x100 * index

    class device:   # torch.cuda.device
        def __init__(self, dev):
            self.idx = get_device_index(dev, optional=True)
            self.prev_idx = -1

        def __enter__(self):
            self.prev_idx = exchange_device(self.idx)

        def __exit__(self, *exc):
            self.idx = exchange_device(self.prev_idx)
            return False

    class Stream:
        def __new__(cls, stream_id=0, device_index=0, device_type=1):
            s = object.__new__(cls)
            s.stream_id, s.device_index, s.device_type = stream_id, device_index, device_type
            return s

        @property
        def cuda_stream(self):
            return raw_stream(self.device_index)

    def current_stream(dev=None):
        return Stream(stream_id=1, device_index=get_device_index(dev, optional=True), device_type=1)

    torch.cuda = types.SimpleNamespace(device=device, current_stream=current_stream, Stream=Stream,
                                       current_device=lambda: state["device"],
                                       is_current_stream_capturing=lambda: state.get("capturing") == state["device"])
    torch._C = types.SimpleNamespace()
    torch.fake_state = state   # the current device; "capturing": the device whose stream a graph captures
    if modern:
        torch.cuda._exchange_device = torch.cuda._maybe_exchange_device = exchange_device
        torch._C._cuda_getCurrentRawStream = raw_stream
    return torch
