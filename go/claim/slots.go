// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package claim

import (
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The verdict map's layout (libclaim's headers/verdict.h, version 3).
const (
	mapMagic       = 0x4d49414c
	mapVersion     = 3
	threadSlots    = 65536 // the threads' region (slot 0 the header)
	goroutineSlots = 65536 // the goroutines', after it
	mapSlots       = threadSlots + goroutineSlots
	slotSize       = 64
	defaultPath    = "/sys/fs/bpf/claimd/verdicts"
	envPath        = "CLAIMD_VERDICTS"
)

// mapHeader is slot 0.
type mapHeader struct {
	magic      uint32
	version    uint32
	slots      uint32
	slotSize   uint32
	alive      uint32
	generation uint32
}

// slot is one thread's or goroutine's running verdict (struct claim_slot).
type slot struct {
	seq         uint32
	tid         uint32
	active      uint8
	verdict     uint8
	rule        uint8
	_           uint8
	causePort   uint16
	_           uint16
	causeAddr   [16]byte
	goroutine   uint64
	tgid        uint32
	outsideSeen uint32
	_           [8]byte
	procWord    uint64
}

// Handle maps claimd's verdict map. Its methods are safe for concurrent use.
type Handle struct {
	mem []byte
	pid uint32
}

// Open maps the verdict map at path ("": $CLAIMD_VERDICTS, else claimd's
// default pin). It never fails: with no claimd, or a map of another layout,
// the handle answers Unknown.
func Open(path string) *Handle {
	h := &Handle{pid: uint32(os.Getpid())}
	if path == "" {
		path = os.Getenv(envPath)
	}
	if path == "" {
		path = defaultPath
	}
	fd, err := objGet(path)
	if err != nil {
		return h
	}
	defer syscall.Close(fd)
	mem, err := syscall.Mmap(fd, 0, mapSlots*slotSize, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return h
	}
	hdr := (*mapHeader)(unsafe.Pointer(&mem[0]))
	if hdr.magic != mapMagic || hdr.version != mapVersion || hdr.slots != mapSlots ||
		hdr.slotSize != slotSize {
		syscall.Munmap(mem) // another layout: do not guess
		return h
	}
	h.mem = mem
	return h
}

// Close unmaps the map; the handle then answers Unknown.
func (h *Handle) Close() {
	if h != nil && h.mem != nil {
		syscall.Munmap(h.mem)
		h.mem = nil
	}
}

// Connected says whether the handle maps a live claimd's verdicts.
func (h *Handle) Connected() bool {
	if h == nil || h.mem == nil {
		return false
	}
	hdr := (*mapHeader)(unsafe.Pointer(&h.mem[0]))
	return atomic.LoadUint32(&hdr.alive) == 1
}

// goroutineIndex is the slot of goroutine g (its runtime.g's address) of
// process tgid, as claim_goroutine_index computes it.
func goroutineIndex(tgid uint32, g uintptr) uint32 {
	h := (uint64(g) ^ uint64(tgid)<<32) * 0x9e3779b97f4a7c15
	return threadSlots + uint32(h>>32)%goroutineSlots
}

// Current is the running verdict of the request the calling goroutine
// serves: what it would be if the request failed now. Unknown when it
// serves none that claimd follows, or no claimd runs. No system call.
func (h *Handle) Current() Result {
	r := Result{Verdict: Unknown}
	if !h.Connected() {
		return r
	}
	g := getg()
	if g == 0 {
		return r // an architecture this package cannot ask on
	}
	s := (*slot)(unsafe.Pointer(&h.mem[uintptr(goroutineIndex(h.pid, g))*slotSize]))
	for tries := 0; tries < readTries; tries++ {
		if tries >= readFast {
			time.Sleep(readWait) // a writer preempted mid-write: wait it out a little
		}
		seq := atomic.LoadUint32(&s.seq)
		if seq&1 != 0 {
			continue // being written right now
		}
		c := *s
		if atomic.LoadUint32(&s.seq) != seq {
			continue
		}
		// Another goroutine's slot (same index), or no request served.
		if c.tid != 0 || c.goroutine != uint64(g) || c.tgid != h.pid || c.active == 0 {
			break
		}
		if c.verdict == uint8(Claimed) || c.verdict == uint8(Unclaimed) {
			r.Verdict = Verdict(c.verdict)
		}
		r.Rule = Rule(c.rule)
		// A call outside requests since it began may be its own: not in its log.
		if r.Verdict != Unknown && h.procUnsure(c.outsideSeen) {
			return Result{Verdict: Unknown, Rule: ruleUntiedCall}
		}
		if c.causePort != 0 {
			addr := netip.AddrFrom16(c.causeAddr).Unmap()
			r.Cause = netip.AddrPortFrom(addr, c.causePort)
		}
		break
	}
	return r
}

// A slot being written (odd sequence) is read again at once readFast
// times, then after a short wait each try: the writer, a kernel program,
// may be preempted mid-write on a busy host. About a millisecond in all,
// then Unknown (libclaim's claim_current waits the same).
const (
	readFast  = 4
	readTries = readFast + 50
	readWait  = 20 * time.Microsecond
)

// ruleUntiedCall is the rule of a verdict a call it may not see makes unknown.
const ruleUntiedCall Rule = 9

// procCollided in a proc word's high half: two processes met there.
const procCollided = 0xffffffff

// claimProcUnsure is claim_proc_unsure (verdict.h): is the running verdict of
// a request of process pid that saw outsideSeen calls outside requests at
// its start unsure, given pid's main thread's slot's proc word?
func claimProcUnsure(word uint64, pid, outsideSeen uint32) bool {
	who := uint32(word >> 32)
	if who == procCollided {
		return true
	}
	if who != pid {
		return outsideSeen != 0
	}
	return uint32(word) != outsideSeen
}

// procUnsure is claimProcUnsure for this process, from the map.
func (h *Handle) procUnsure(outsideSeen uint32) bool {
	idx := 1 + h.pid%(threadSlots-1)
	p := (*slot)(unsafe.Pointer(&h.mem[uintptr(idx)*slotSize]))
	return claimProcUnsure(atomic.LoadUint64(&p.procWord), h.pid, outsideSeen)
}

var (
	defaultOnce   sync.Once
	defaultHandle *Handle
)

// Default is the handle Current, Handler and Transport use: the map at
// $CLAIMD_VERDICTS or claimd's default pin, opened on first use.
func Default() *Handle {
	defaultOnce.Do(func() { defaultHandle = Open("") })
	return defaultHandle
}

// Current is Default().Current().
func Current() Result {
	return Default().Current()
}
