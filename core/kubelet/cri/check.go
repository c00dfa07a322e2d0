package cri

import (
	"fmt"
	"slices"

	"github.com/kubetab/kubetab/core/kubelet/cri/instrument"
)

// wasiPreview1 lists the functions of WASI preview1
// (wasi_snapshot_preview1.witx), all of which wazero provides.
var wasiPreview1 = []string{
	"args_get", "args_sizes_get", "clock_res_get", "clock_time_get",
	"environ_get", "environ_sizes_get", "fd_advise", "fd_allocate", "fd_close",
	"fd_datasync", "fd_fdstat_get", "fd_fdstat_set_flags", "fd_fdstat_set_rights",
	"fd_filestat_get", "fd_filestat_set_size", "fd_filestat_set_times", "fd_pread",
	"fd_prestat_dir_name", "fd_prestat_get", "fd_pwrite", "fd_read", "fd_readdir",
	"fd_renumber", "fd_seek", "fd_sync", "fd_tell", "fd_write",
	"path_create_directory", "path_filestat_get", "path_filestat_set_times",
	"path_link", "path_open", "path_readlink", "path_remove_directory",
	"path_rename", "path_symlink", "path_unlink_file", "poll_oneoff", "proc_exit",
	"proc_raise", "random_get", "sched_yield", "sock_accept", "sock_recv",
	"sock_send", "sock_shutdown",
}

// CheckCommand is a quick look at a module before anyone compiles it, for a
// learner's upload: it must be a WebAssembly binary the runtime can
// instrument, export "_start" and "memory", and import only WASI preview1
// functions. Signatures and everything else are checked when the image is
// pulled (see PullImage). Errors wrap ErrInvalidImage and say what is wrong
// in words a learner can act on.
func CheckCommand(module []byte) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidImage, fmt.Sprintf(format, args...))
	}
	sum, err := instrument.Inspect(module)
	if err != nil {
		return bad("%v", err)
	}
	if _, _, err := instrument.Module(module); err != nil {
		return bad("%v", err)
	}
	exported := func(name string, kind byte) bool {
		return slices.ContainsFunc(sum.Exports, func(e instrument.Export) bool { return e.Name == name && e.Kind == kind })
	}
	switch {
	case !exported("_start", 0) && exported("_initialize", 0):
		return bad(`it is a WASI reactor (exports "_initialize"), not a command: there is no "_start" to run; build it as a program with a main function`)
	case !exported("_start", 0):
		return bad(`no "_start" export: not a WASI command; build it for wasm32-wasi (WASI preview1) as a program with a main function`)
	case !exported("memory", 2):
		return bad(`no "memory" export: WASI needs the guest's memory`)
	}
	for _, imp := range sum.Imports {
		if _, ok := hostFunctions[imp.Name]; ok && imp.Module == HostModule && imp.Kind == 0 {
			continue // the userland's host functions (host.go); signatures are checked at pull
		}
		if imp.Module != "wasi_snapshot_preview1" {
			return bad("it imports %s.%s: a container can only import wasi_snapshot_preview1 functions (no JavaScript, no wasi preview2 components)", imp.Module, imp.Name)
		}
		if imp.Kind != 0 || !slices.Contains(wasiPreview1, imp.Name) {
			return bad("it imports %s.%s, which is not a WASI preview1 function", imp.Module, imp.Name)
		}
	}
	return nil
}
