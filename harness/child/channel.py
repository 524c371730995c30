"""The line between the judge (evaluate.py, trusted) and the runner (runner.py, the candidate's process): one Unix
SOCK_SEQPACKET socket the parent made, one end in each. A message is one packet of JSON; tensors travel beside it
in one anonymous file (memfd) whose descriptor rides along (SCM_RIGHTS), described in the JSON by a tree:

  {"t": [dtype, shape, device, offset, nbytes]}   a tensor (its bytes at offset in the file)
  {"n": value}                                    a number, a bool or None
  {"tuple": [...]} / {"list": [...]}              a plain tuple or list
  {"other": "module.Type"}                        anything else (compared as a mismatch)

The judge trusts nothing it receives: a packet over LIMIT, bad JSON, a descriptor that is not a regular file,
sizes that disagree, a tree deeper than DEPTH: each is a ChannelError, which the judge makes the candidate's
failure. Bytes are read with pread into the judge's own memory (no mapping the runner could shrink under it), and
only for tensors whose shape and dtype match what the judge expects: a runner cannot make the judge allocate more
than the reference's own outputs.
"""

from __future__ import annotations

import array
import json
import os
import socket
import stat

import torch

LIMIT = 1 << 16          # bytes of JSON in one packet
DEPTH = 8                # nesting of an output's tuples and lists
CHUNK = 1 << 30          # bytes per pread/pwrite call
DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64, torch.complex128,
    torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool)}


class ChannelError(Exception):
    """The other side broke the protocol, or went away."""


class ChannelClosed(ChannelError):
    """The other side went away (its process ended)."""


class Channel:
    def __init__(self, fd: int):
        os.set_inheritable(fd, False)  # a process the candidate starts must not keep the channel open after it
        self.sock = socket.socket(fileno=fd)

    def send(self, message: dict, value: object = None) -> None:
        """`message`, and `value` (an output: tensors, numbers, tuples, lists) as message["value"]."""
        fds = []
        if value is not None:
            tensors: list[torch.Tensor] = []
            message = {**message, "value": _encode(value, tensors)}
            if tensors:
                fds.append(_write_tensors(tensors, message["value"]))
        data = json.dumps(message).encode()
        if len(data) > LIMIT:
            raise ChannelError(f"message of {len(data)} bytes, over the limit of {LIMIT}")
        try:
            self.sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else [])
        except OSError as exc:
            raise ChannelClosed(f"the other side is gone ({exc.strerror})") from None
        finally:
            for fd in fds:
                os.close(fd)

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


# ---- the runner's side: an output into a file ----

def _encode(value: object, tensors: list, depth: int = 0) -> dict:
    if type(value) is torch.Tensor:
        tensors.append(value)
        return {"t": [str(value.dtype).removeprefix("torch."), list(value.shape), value.device.type, 0, 0]}
    if type(value) in (tuple, list) and depth < DEPTH:
        return {type(value).__name__: [_encode(v, tensors, depth + 1) for v in value]}
    if value is None or type(value) in (int, float, bool):
        return {"n": value}
    return {"other": f"{type(value).__module__}.{type(value).__qualname__}"}


def _write_tensors(tensors: list[torch.Tensor], tree: dict) -> int:
    fd = os.memfd_create("outputs", os.MFD_CLOEXEC)
    offset = 0
    for t, node in zip(tensors, _tensor_nodes(tree), strict=True):
        data = t.detach().contiguous().reshape(-1).view(torch.uint8).cpu().numpy()
        node[3], node[4] = offset, data.nbytes
        view = memoryview(data).cast("B")
        for start in range(0, data.nbytes, CHUNK):
            written = os.pwrite(fd, view[start:start + CHUNK], offset + start)
            if written != len(view[start:start + CHUNK]):
                raise OSError(f"short write to the output file ({written} bytes)")
        offset += data.nbytes
    return fd


def _tensor_nodes(tree: dict):
    if "t" in tree:
        yield tree["t"]
    for key in ("tuple", "list"):
        for item in tree.get(key, ()):
            yield from _tensor_nodes(item)


# ---- the judge's side: an output out of a file, against what is expected ----

def decode(tree: object, fd: int | None, expected: object, device: torch.device) -> object:
    """The runner's output as the judge compares it: a tensor whose dtype and shape match the expected one at its
    place is read (onto `device` when the runner's was on that device type); any other claimed tensor becomes an
    empty `meta` tensor of the claimed dtype and shape, which the comparison reports as wrong."""
    size = 0
    if fd is not None:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ChannelError("the outputs' descriptor is not a file")
        size = info.st_size
    return _decode(tree, fd, size, expected, device, 0)


def _decode(node: object, fd: int | None, size: int, expected: object, device: torch.device, depth: int) -> object:
    if not isinstance(node, dict) or len(node) != 1 or depth > DEPTH:
        raise ChannelError("a malformed output")
    (kind, body), = node.items()
    if kind == "n" and (body is None or type(body) in (int, float, bool)):
        return body
    if kind in ("tuple", "list") and isinstance(body, list):
        items = expected if isinstance(expected, (tuple, list)) and len(expected) == len(body) else [None] * len(body)
        decoded = [_decode(b, fd, size, e, device, depth + 1) for b, e in zip(body, items, strict=True)]
        return tuple(decoded) if kind == "tuple" else decoded
    if kind == "other" and isinstance(body, str):
        return _Other(body[:200])
    if kind == "t":
        return _tensor(body, fd, size, expected, device)
    raise ChannelError("a malformed output")


class _Other:
    """An output of a type the runner could not send: never equal to anything expected."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _tensor(body: object, fd: int | None, size: int, expected: object, device: torch.device) -> torch.Tensor:
    try:
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
    if fd is None or nbytes != expected.numel() * expected.element_size() or offset + nbytes > size:
        raise ChannelError("a tensor whose bytes are not in the outputs' file")
    data = torch.empty(nbytes, dtype=torch.uint8)
    view = memoryview(data.numpy()).cast("B")
    for start in range(0, nbytes, CHUNK):
        part = view[start:start + CHUNK]
        if os.preadv(fd, [part], offset + start) != len(part):
            raise ChannelError("the outputs' file ended early")
    tensor = data.view(dtype).reshape(shape)
    return tensor.to(device) if device_type == device.type else tensor
