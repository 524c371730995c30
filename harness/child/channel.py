"""The line between the judge (evaluate.py, trusted) and the runner (runner.py, the candidate's process): one Unix
SOCK_SEQPACKET socket the parent made, one end in each. A message is one packet of JSON; tensors travel beside it
in one anonymous file (memfd) whose descriptor rides along (SCM_RIGHTS), described in the JSON by a tree:

  {"t": [dtype, shape, device, offset, nbytes]}   a tensor (its bytes at offset in the file)
  {"n": value}                                    a number, a bool or None
  {"tuple": [...]} / {"list": [...]}              a plain tuple or list
  {"other": "module.Type"}                        anything else (compared as a mismatch)

The file is the runner's one outbox, made once (and again only when an output outgrows it), sealed against shrinking
and growing, and mapped by both sides: an output crosses as one copy into the mapping in the runner and one copy out
of it in the judge.

On the GPU an output of CUDA tensors crosses device to device instead (`use_device`, which the judge turns on where
the driver can do it): the runner's outbox is device memory it exports (device_share.py), the message says so
(`"box": ["device", size]`), and the driver's descriptor of it rides with the first message that uses it; the judge
maps it then, keeps the mapping for the messages after it (until a new outbox comes), and copies the tensors it
expects out of it on the device. Through host memory, a 3.2 GB output took over a second each way at pageable speed
(the mappings are not pinned: a failed cudaHostRegister would leave an error for the next kernel launch to raise);
exporting and mapping the outbox anew for every output added about 1.5 ms to each hand-over on an H200, which the
judge read as work left until the output was read.

The judge trusts nothing it receives: a packet over LIMIT, bad JSON, a descriptor that is not a sealed memfd, sizes
that disagree, a tree deeper than DEPTH: each is a ChannelError, which the judge makes the candidate's failure. It
copies a tensor's bytes out of the shared file at once, and only for tensors whose shape and dtype match what the
judge expects: a runner cannot make the judge allocate more than the reference's own outputs.
"""

from __future__ import annotations

import array
import fcntl
import json
import mmap
import os
import socket
import stat

import torch

from harness.child import device_share
from harness.errors import HarnessError

LIMIT = 1 << 16          # bytes of JSON in one packet
DEPTH = 8                # nesting of an output's tuples and lists
ALIGN = 64               # each tensor's offset in the file
GROW = 64 << 20          # an outbox is made in steps of this many bytes
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64, torch.complex128,
    torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool)}


class ChannelError(HarnessError):
    """The other side broke the protocol, or went away."""


class ChannelClosed(ChannelError):
    """The other side went away (its process ended)."""


class Channel:
    def __init__(self, fd: int):
        os.set_inheritable(fd, False)  # a process the candidate starts must not keep the channel open after it
        self.sock = socket.socket(fileno=fd)
        self.outbox: Shared | None = None  # the runner's file for its outputs
        self.inbox: Shared | None = None   # the judge's mapping of it
        self.device_outbox: device_share.Export | None = None  # the runner's outbox on the GPU
        self.device_inbox: _DeviceInbox | None = None  # the judge's mapping of it (the last one it was sent)
        self.use_device: int | None = None  # the runner: the device ordinal whose outputs cross device to device
        self.last_box = "host"  # the judge: where the last output it decoded crossed ("host" or "device")

    def send(self, message: dict, value: object = None) -> None:
        """`message`, and `value` (an output: tensors, numbers, tuples, lists) as message["value"]."""
        fds, made = [], None  # made: a descriptor of the device outbox, made for this message
        if value is not None:
            tensors: list[torch.Tensor] = []
            message = {**message, "value": _encode(value, tensors)}
            if tensors:
                box, made = self._write_device(tensors, message["value"])
                if box is None:
                    fds.append(self._write_tensors(tensors, message["value"]))
                else:
                    message["box"] = box
                    fds += [made] if made is not None else []
        data = json.dumps(message).encode()
        try:
            if len(data) > LIMIT:
                raise ChannelError(f"message of {len(data)} bytes, over the limit of {LIMIT}")
            self.sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else [])
        except OSError as exc:
            raise ChannelClosed(f"the other side is gone ({exc.strerror})") from None
        finally:
            if made is not None:
                os.close(made)

    def receive(self) -> tuple[dict, int | None]:
        """The next message and the descriptor that came with it (the caller closes it), or ChannelError."""
        try:
            data, ancillary, flags, _ = self.sock.recvmsg(LIMIT + 1, socket.CMSG_SPACE(4 * 4))
        except OSError as exc:
            raise ChannelClosed(f"the other side is gone ({exc.strerror})") from None
        fds = [fd for level, kind, raw in ancillary if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS
               for fd in array.array("i", raw[:len(raw) - len(raw) % 4])]
        try:
            if not data:
                raise ChannelClosed("the other side is gone")
            if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC) or len(data) > LIMIT or len(fds) > 1:
                raise ChannelError("a message over the size limit")
            try:
                message = json.loads(data)
            except ValueError:
                raise ChannelError("a message that is not JSON") from None
            if not isinstance(message, dict):
                raise ChannelError("a message that is not a JSON object")
        except ChannelError:
            for fd in fds:
                os.close(fd)
            raise
        return message, (fds[0] if fds else None)

    def _write_tensors(self, tensors: list[torch.Tensor], tree: dict) -> int:
        """The tensors' bytes into the outbox (made or outgrown: a new one), their places into `tree`; its fd."""
        places, end = _places(tensors)
        if self.outbox is None or self.outbox.size < end:
            self.outbox = Shared.create(max(end, 1))
        _fill(self.outbox.bytes, tensors, tree, places)
        return self.outbox.fd

    def _write_device(self, tensors: list[torch.Tensor], tree: dict) -> tuple[list | None, int | None]:
        """The tensors' bytes into the device outbox: the message's box, and a descriptor of the outbox where it is
        new (made, or remade for an output that outgrew it); (None, None) where they cross through the file, every
        tensor not being on the GPU that crosses device to device (also when the driver refuses the device outbox:
        the file always works)."""
        if self.use_device is None or any(t.device != torch.device("cuda", self.use_device) for t in tensors):
            return None, None
        places, end = _places(tensors)
        made = None
        try:
            if self.device_outbox is None or self.device_outbox.size < end:
                self._drop_device_outbox()
                self.device_outbox = device_share.Export.create(-(-max(end, 1) // GROW) * GROW, self.use_device)
                made = self.device_outbox.descriptor()
            _fill(self.device_outbox.tensor(), tensors, tree, places)
            torch.cuda.synchronize(self.use_device)
            return ["device", self.device_outbox.size], made
        except device_share.DeviceShareError:
            self._drop_device_outbox()  # through the file from now on
            self.use_device = None
            return None, None

    def _drop_device_outbox(self) -> None:
        if self.device_outbox is not None:
            self.device_outbox.close()
            self.device_outbox = None

    def decode(self, tree: object, fd: int | None, expected: object, device: torch.device,
               box: object = None) -> object:
        """The runner's output as the judge compares it: a tensor whose dtype and shape match the expected one at
        its place is copied out of the shared file, or out of the runner's device outbox where `box` (the message's)
        says it came through one (onto `device` when the runner's was on that device type); any other claimed tensor
        becomes an empty `meta` tensor of the claimed dtype and shape, which the comparison reports as wrong. Closes
        `fd`."""
        try:
            if box is not None:
                self.last_box = "device"
                if fd is not None and self.device_inbox is not None:  # a new outbox: the last one is done with
                    self.device_inbox.close()
                    self.device_inbox = None
                self.device_inbox = _DeviceInbox.receive(fd, box, device, self.device_inbox)
                try:
                    return _decode(tree, self.device_inbox, expected, device, 0)
                finally:
                    self.device_inbox.copied()
            self.last_box = "host"
            if fd is None:
                return _decode(tree, None, expected, device, 0)
            self.inbox = Shared.receive(fd, self.inbox)
            return _decode(tree, self.inbox, expected, device, 0)
        finally:
            if fd is not None:
                os.close(fd)


class Shared:
    """A memfd mapped shared."""

    def __init__(self, fd: int, size: int, key: tuple[int, int]):
        self.fd, self.size, self.key = fd, size, key
        self.map = mmap.mmap(fd, size)
        self.bytes = torch.frombuffer(self.map, dtype=torch.uint8)

    @classmethod
    def create(cls, size: int) -> Shared:
        fd = os.memfd_create("outputs", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        size = -(-size // GROW) * GROW
        os.ftruncate(fd, size)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
        info = os.fstat(fd)
        return cls(fd, size, (info.st_dev, info.st_ino))

    @classmethod
    def receive(cls, fd: int, known: Shared | None) -> Shared:
        """The file behind a received descriptor: `known` if it is the same one, else a new mapping of it, once it
        is proven a memfd that cannot shrink (reading a mapping past a file's end would kill the judge)."""
        info = os.fstat(fd)
        key = (info.st_dev, info.st_ino)
        if known is not None and known.key == key:
            return known
        try:
            sealed = stat.S_ISREG(info.st_mode) and fcntl.fcntl(fd, fcntl.F_GET_SEALS) & SEALS == SEALS
        except OSError:
            sealed = False
        if not sealed or info.st_size <= 0:
            raise ChannelError("the outputs' descriptor is not a sealed memfd")
        return cls(os.dup(fd), info.st_size, key)


class _DeviceInbox:
    """The judge's mapping of the runner's device outbox, kept for the messages that name it; what is copied out of
    it is copied before the runner may write into it again."""

    def __init__(self, mapping: device_share.Import):
        self.mapping = mapping
        self.size = mapping.size
        self.bytes = mapping.tensor()

    @classmethod
    def receive(cls, fd: int | None, box: object, device: torch.device, known: _DeviceInbox | None) -> _DeviceInbox:
        """The mapping a message's box names: of the descriptor that came with it, or else `known`, the last one,
        whose size the box must give."""
        if not (isinstance(box, list) and len(box) == 2 and box[0] == "device" and type(box[1]) is int
                and 0 < box[1] <= 1 << 48 and device.type == "cuda"):
            raise ChannelError("a malformed outbox")
        if fd is None:
            if known is None or known.size != box[1]:
                raise ChannelError("a device outbox the judge was not given")
            return known
        try:
            return cls(device_share.Import.open(fd, box[1], device.index or 0))
        except device_share.DeviceShareError as exc:
            raise ChannelError(f"the outputs' device memory cannot be mapped: {exc}") from None

    def copied(self) -> None:
        """The copies out of it are done (the runner writes its next output into the same memory)."""
        torch.cuda.synchronize(self.bytes.device)

    def close(self) -> None:
        self.copied()
        del self.bytes
        self.mapping.close()


# ---- the runner's side: an output into a file ----

def _places(tensors: list[torch.Tensor]) -> tuple[list[int], int]:
    """Each tensor's offset in an outbox (ALIGN-ed), and the bytes they need together."""
    places, end = [], 0
    for t in tensors:
        places.append(end)
        end += -(-t.numel() * t.element_size() // ALIGN) * ALIGN
    return places, end


def _fill(outbox: torch.Tensor, tensors: list[torch.Tensor], tree: dict, places: list[int]) -> None:
    """Each tensor's bytes into `outbox` (flat uint8, host or device) at its place, and its place into `tree`."""
    for t, node, offset in zip(tensors, _tensor_nodes(tree), places, strict=True):
        nbytes = t.numel() * t.element_size()
        node[3], node[4] = offset, nbytes
        if nbytes:
            outbox[offset:offset + nbytes].copy_(t.detach().contiguous().reshape(-1).view(torch.uint8))


def _encode(value: object, tensors: list, depth: int = 0) -> dict:
    if type(value) is torch.Tensor:
        tensors.append(value)
        return {"t": [str(value.dtype).removeprefix("torch."), list(value.shape), value.device.type, 0, 0]}
    if (type(value) is tuple or type(value) is list) and depth < DEPTH:
        return {type(value).__name__: [_encode(v, tensors, depth + 1) for v in value]}
    if value is None or type(value) in (int, float, bool):
        return {"n": value}
    return {"other": f"{type(value).__module__}.{type(value).__qualname__}"}


def _tensor_nodes(tree: dict):
    if "t" in tree:
        yield tree["t"]
    for key in ("tuple", "list"):
        for item in tree.get(key, ()):
            yield from _tensor_nodes(item)


# ---- the judge's side: an output out of a file, against what is expected ----

def _decode(node: object, shared: Shared | _DeviceInbox | None, expected: object, device: torch.device,
            depth: int) -> object:
    if not isinstance(node, dict) or len(node) != 1 or depth > DEPTH:
        raise ChannelError("a malformed output")
    (kind, body), = node.items()
    if kind == "n" and (body is None or type(body) in (int, float, bool)):
        return body
    if kind in ("tuple", "list") and isinstance(body, list):
        items = expected if isinstance(expected, (tuple, list)) and len(expected) == len(body) else [None] * len(body)
        decoded = [_decode(b, shared, e, device, depth + 1) for b, e in zip(body, items, strict=True)]
        return tuple(decoded) if kind == "tuple" else decoded
    if kind == "other" and isinstance(body, str):
        return _Other(body[:200])
    if kind == "t":
        return _tensor(body, shared, expected, device)
    raise ChannelError("a malformed output")


class _Other:
    """An output of a type the runner could not send: never equal to anything expected."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _tensor(body: object, shared: Shared | _DeviceInbox | None, expected: object,
            device: torch.device) -> torch.Tensor:
    try:
        if not isinstance(body, list):
            raise TypeError
        dtype_name, shape, device_type, offset, nbytes = body
        dtype = DTYPES[dtype_name]
        if not all(type(n) is int and n >= 0 for n in (*shape, offset, nbytes)) or len(shape) > 16:
            raise ValueError
    except (TypeError, ValueError, KeyError):
        raise ChannelError("a malformed tensor in the output") from None
    if not (isinstance(expected, torch.Tensor) and expected.dtype == dtype and list(expected.shape) == shape):
        try:
            return torch.empty(shape, dtype=dtype, device="meta")  # no memory: its shape and dtype to compare
        except RuntimeError:
            raise ChannelError("a tensor of an impossible shape in the output") from None
    outside = "a tensor whose bytes are not in the outputs' file"
    if nbytes != expected.numel() * expected.element_size():
        raise ChannelError(outside)
    if not nbytes:
        return torch.empty(shape, dtype=dtype, device=device if device_type == device.type else "cpu")
    if shared is None or offset + nbytes > shared.size or offset % ALIGN:
        raise ChannelError(outside)
    data = shared.bytes[offset:offset + nbytes].view(dtype).reshape(shape)
    if isinstance(shared, _DeviceInbox):  # claimed as a CPU tensor, it is compared as one (and found wrong)
        return data.clone() if device_type == device.type else data.cpu()
    return data.to(device) if device_type == device.type and device.type != "cpu" else data.clone()
