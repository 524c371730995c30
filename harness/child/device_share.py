"""Device memory that one process lends another through a file descriptor (the CUDA driver's virtual memory
management, with POSIX file descriptor handles), so that the runner's outputs reach the judge device to device.

Through host memory, a 3.2 GB output crossed at pageable speed twice (the runner's copy out of the GPU, the judge's
copy back in): over a second for each checked output, six of them an evaluation. Here the runner copies its output
into memory it exported (`Export`), sends the descriptor beside the first message that uses it (channel.py), and the
judge maps that memory (`Import`), once, and copies what it needs out of it at once, on the device.

The judge trusts nothing about a descriptor it receives: it must be what the driver exports (a character device of
the driver's), the mapping must fit the allocation (the driver refuses one that does not), and a refusal is the
sender's broken protocol, never a fault of the judge's context (these driver calls leave no sticky error). An
allocation stays alive while either side holds it: a runner that frees its own cannot pull memory from under the
judge.

Only the standard library and the driver (libcuda.so.1, which every CUDA process has loaded): no CUDA Python
package is needed.
"""

from __future__ import annotations

import ctypes
import functools
import os
import stat

from harness.errors import HarnessError

_POSIX_FD = 1            # CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
_PINNED = 1              # CU_MEM_ALLOCATION_TYPE_PINNED
_ON_DEVICE = 1           # CU_MEM_LOCATION_TYPE_DEVICE
_READ_WRITE = 3          # CU_MEM_ACCESS_FLAGS_PROT_READWRITE
_VMM_SUPPORTED, _POSIX_FD_SUPPORTED = 102, 103  # CU_DEVICE_ATTRIBUTE_*
NVIDIA_MAJOR = 195       # the driver's character devices (/dev/nvidia*); an exported handle is one of them


class DeviceShareError(HarnessError):
    """The driver refused, or a descriptor is not one it exported."""


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class _Prop(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", _Location),
                ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", _AllocFlags)]


class _Access(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


@functools.lru_cache(maxsize=1)
def _driver() -> ctypes.CDLL:
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        raise DeviceShareError(f"the CUDA driver library cannot be loaded: {exc}") from None


def _call(name: str, *args) -> None:
    driver = _driver()
    code = getattr(driver, name)(*args)
    if code != 0:
        text = ctypes.c_char_p()
        driver.cuGetErrorString(code, ctypes.byref(text))
        raise DeviceShareError(f"{name}: {(text.value or b'error').decode()} ({code})")


def _prop(device: int) -> _Prop:
    return _Prop(type=_PINNED, requestedHandleTypes=_POSIX_FD, location=_Location(_ON_DEVICE, device))


def supported(device: int) -> bool:
    """Whether `device` (an ordinal of this process's visible devices) can lend memory this way."""
    try:
        handle, vmm, posix = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        _call("cuDeviceGet", ctypes.byref(handle), device)
        _call("cuDeviceGetAttribute", ctypes.byref(vmm), _VMM_SUPPORTED, handle)
        _call("cuDeviceGetAttribute", ctypes.byref(posix), _POSIX_FD_SUPPORTED, handle)
    except (DeviceShareError, AttributeError):
        return False
    return bool(vmm.value and posix.value)


def granularity(device: int) -> int:
    size = ctypes.c_size_t()
    _call("cuMemGetAllocationGranularity", ctypes.byref(size), ctypes.byref(_prop(device)), 0)
    return size.value


class _Mapping:
    """An allocation handle mapped at an address of this process, readable and writable from `device`."""

    def __init__(self, handle: int, size: int, device: int):
        self.handle, self.size, self.device = handle, size, device
        self.address = 0
        ptr = ctypes.c_uint64()
        try:
            _call("cuMemAddressReserve", ctypes.byref(ptr), ctypes.c_size_t(size), ctypes.c_size_t(0),
                  ctypes.c_uint64(0), ctypes.c_uint64(0))
            self.address = ptr.value
            _call("cuMemMap", ctypes.c_uint64(self.address), ctypes.c_size_t(size), ctypes.c_size_t(0),
                  ctypes.c_uint64(handle), ctypes.c_uint64(0))
            self.mapped = True
            access = _Access(location=_Location(_ON_DEVICE, device), flags=_READ_WRITE)
            _call("cuMemSetAccess", ctypes.c_uint64(self.address), ctypes.c_size_t(size), ctypes.byref(access),
                  ctypes.c_size_t(1))
        except DeviceShareError:
            self.close()
            raise

    def tensor(self):
        """The mapping as a flat uint8 CUDA tensor (it does not own the memory: keep this object alive)."""
        import torch

        return torch.as_tensor(_ArrayInterface(self.address, self.size), device=f"cuda:{self.device}")

    def close(self) -> None:
        if getattr(self, "mapped", False):
            self.mapped = False
            _quietly("cuMemUnmap", ctypes.c_uint64(self.address), ctypes.c_size_t(self.size))
        if self.address:
            _quietly("cuMemAddressFree", ctypes.c_uint64(self.address), ctypes.c_size_t(self.size))
            self.address = 0
        if self.handle:
            _quietly("cuMemRelease", ctypes.c_uint64(self.handle))
            self.handle = 0


class Export(_Mapping):
    """Device memory of this process's own, exportable: the runner's outbox on the GPU."""

    @classmethod
    def create(cls, size: int, device: int) -> Export:
        step = granularity(device)
        size = -(-max(size, 1) // step) * step
        handle = ctypes.c_uint64()
        _call("cuMemCreate", ctypes.byref(handle), ctypes.c_size_t(size), ctypes.byref(_prop(device)),
              ctypes.c_uint64(0))
        try:
            return cls(handle.value, size, device)
        except DeviceShareError:
            _quietly("cuMemRelease", handle)
            raise

    def descriptor(self) -> int:
        """A new descriptor for the allocation (the caller sends and closes it)."""
        fd = ctypes.c_int(-1)
        _call("cuMemExportToShareableHandle", ctypes.byref(fd), ctypes.c_uint64(self.handle), _POSIX_FD,
              ctypes.c_uint64(0))
        return fd.value


class Import(_Mapping):
    """Another process's exported allocation, mapped here: the judge's view of the runner's outbox."""

    @classmethod
    def open(cls, fd: int, size: int, device: int) -> Import:
        """Map the first `size` bytes of the allocation behind `fd` (the caller keeps and closes `fd`)."""
        if not is_driver_descriptor(fd):
            raise DeviceShareError("the descriptor is not one the CUDA driver exported")
        if size <= 0:
            raise DeviceShareError(f"a mapping of {size} bytes")
        handle = ctypes.c_uint64()
        _call("cuMemImportFromShareableHandle", ctypes.byref(handle), ctypes.c_void_p(fd), _POSIX_FD)
        try:
            return cls(handle.value, size, device)
        except DeviceShareError:
            _quietly("cuMemRelease", handle)
            raise


def is_driver_descriptor(fd: int) -> bool:
    """A descriptor of the NVIDIA driver's character devices: what cuMemExportToShareableHandle hands out. Anything
    else (a pipe, a socket, a file) is never given to the driver."""
    try:
        info = os.fstat(fd)
    except OSError:
        return False
    return stat.S_ISCHR(info.st_mode) and os.major(info.st_rdev) == NVIDIA_MAJOR


class _ArrayInterface:
    def __init__(self, address: int, size: int):
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (address, False),
                                         "version": 3, "strides": None}


def _quietly(name: str, *args) -> None:
    try:
        _call(name, *args)
    except DeviceShareError:
        pass
