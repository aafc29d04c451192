// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package claim

import (
	"syscall"
	"unsafe"
)

const bpfObjGet = 7 // BPF_OBJ_GET

// objAttr is union bpf_attr as BPF_OBJ_GET reads it.
type objAttr struct {
	pathname  uint64
	bpfFd     uint32
	fileFlags uint32
	pathFd    int32
	_         uint32
}

// objGet opens the BPF object pinned at path (bpf(BPF_OBJ_GET)).
func objGet(path string) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	attr := objAttr{pathname: uint64(uintptr(unsafe.Pointer(p)))}
	fd, _, errno := syscall.Syscall(sysBPF, bpfObjGet, uintptr(unsafe.Pointer(&attr)),
		unsafe.Sizeof(attr))
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}
