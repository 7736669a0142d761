# cython: language_level=3, boundscheck=False, wraparound=False
"""A whole file read into a new ``uint8`` array with the GIL released twice in all (POSIX only).

Python's ``open``/``fstat``/``readinto``/``read``/``close`` each release and take back the GIL: five
hand-overs a file, each a chance for another thread to take it for a whole switch interval. A map
worker reading images that way waits on the GIL after calls of a few microseconds. Here one nogil
section opens and sizes the file, and one reads it and closes it.
"""

from libc.errno cimport EINTR, errno
from posix.fcntl cimport O_CLOEXEC, O_RDONLY
from posix.fcntl cimport open as c_open
from posix.stat cimport fstat, struct_stat
from posix.unistd cimport close as c_close
from posix.unistd cimport read as c_read

import os

import numpy as np


cdef int _fail(int err, object path) except -1:
    raise OSError(err, os.strerror(err), path)


def read_whole(object path):
    """The bytes of the file at ``path`` (str, bytes or path-like) as a writable 1-D ``uint8`` array,
    or ``None`` when the file is longer than ``fstat`` said (it grew, or a /proc-like file reports
    size 0): the caller then reads it the general way. Raises ``OSError`` as ``open`` does."""
    cdef bytes encoded = os.fsencode(path)
    cdef const char* cpath = encoded
    cdef int fd = -1
    cdef int err = 0
    cdef struct_stat st
    cdef Py_ssize_t size, got = 0, n = 0
    cdef unsigned char* buf = NULL
    cdef char extra
    with nogil:
        while True:
            fd = c_open(cpath, O_RDONLY | O_CLOEXEC)
            if fd >= 0 or errno != EINTR:
                break
        if fd < 0:
            err = errno
        elif fstat(fd, &st) != 0:
            err = errno
            c_close(fd)
    if err:
        _fail(err, os.fspath(path))
    size = st.st_size
    try:
        data = np.empty(size, np.uint8)
    except BaseException:
        c_close(fd)
        raise
    cdef unsigned char[::1] view = data
    if size:
        buf = &view[0]
    with nogil:
        while got < size:
            n = c_read(fd, buf + got, size - got)
            if n > 0:
                got += n
            elif n == 0:
                break  # shrank since fstat
            elif errno != EINTR:
                err = errno
                break
        if not err and got == size:
            # One byte more tells a file that grew since fstat in one system call.
            while True:
                n = c_read(fd, &extra, 1)
                if n >= 0 or errno != EINTR:
                    break
            if n < 0:
                err = errno
            elif n > 0:
                got = -1
        c_close(fd)
    if err:
        _fail(err, os.fspath(path))
    if got < 0:
        return None
    if got < size:
        return data[:got].copy()
    return data
