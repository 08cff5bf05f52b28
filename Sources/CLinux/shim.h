#ifndef CLICKAWAY_CLINUX_SHIM_H
#define CLICKAWAY_CLINUX_SHIM_H

// The few glibc functions Swift's Glibc module hides behind _GNU_SOURCE, declared as glibc
// defines them (spawn.h, sys/socket.h), the credentials of a Unix socket's peer, and
// malloc_trim (malloc.h, which the Glibc module leaves out), a thread's id, name and time
// slices (gettid(2), prctl(2), sched_setattr(2): glibc before 2.41 wraps not all), and
// epoll(7), which the Glibc module leaves out.

#include <errno.h>
#include <malloc.h>
#include <sched.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

/// Closes every descriptor from `from` up in the child (glibc 2.34).
static inline int clinux_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

/// Changes the child's working directory (glibc 2.29).
static inline int clinux_spawn_chdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

/// accept(2) with SOCK_CLOEXEC and SOCK_NONBLOCK set atomically (`flags`).
static inline int clinux_accept4(int fd, int flags) {
    return accept4(fd, 0, 0, flags);
}

/// struct ucred, which sys/socket.h declares only under _GNU_SOURCE.
struct clinux_peer_credentials {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};

/// The uid of the process at the other end of a connected Unix socket (SO_PEERCRED); -1 on failure.
static inline int clinux_peer_uid(int fd, uid_t *uid) {
    struct clinux_peer_credentials credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *uid = credentials.uid;
    return 0;
}

/// Gives the pages of freed heap memory back to the system, in every arena (malloc_trim).
static inline int clinux_give_back_freed_memory(void) {
    return malloc_trim(0);
}

/// struct sched_attr (linux/sched/types.h), which glibc before 2.41 does not declare.
struct clinux_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
};

/// Asks the scheduler for time slices of `nanoseconds` (0: the default) for `thread` (0: the
/// calling thread, else an id from `clinux_thread_id`), which keeps its policy (SCHED_OTHER
/// or SCHED_BATCH) and nice value; threads and processes it starts get the defaults again
/// (SCHED_FLAG_RESET_ON_FORK, which also starts them at nice 0 when the thread runs at a
/// negative one). Linux 6.12 and later let a thread with a shorter slice than the running one
/// take the CPU as it wakes; earlier kernels ignore it.
/// Returns 0, or -1 with errno (ENOTSUP under another policy).
static inline int clinux_request_short_slices(int thread, uint64_t nanoseconds) {
    // Without SCHED_RESET_ON_FORK (0x40000000), which sched_getscheduler adds when it is set.
    int policy = sched_getscheduler(thread) & ~0x40000000;
    if (policy != SCHED_OTHER && policy != 3 /* SCHED_BATCH, declared only under _GNU_SOURCE */) {
        errno = ENOTSUP;
        return -1;
    }
    errno = 0;
    // Linux: PRIO_PROCESS with a thread's id is that thread's nice value.
    int nice = getpriority(PRIO_PROCESS, (id_t)thread);
    if (nice == -1 && errno != 0) return -1;
    struct clinux_sched_attr attr = {
        .size = sizeof attr, .sched_policy = (uint32_t)policy, .sched_flags = 1 /* SCHED_FLAG_RESET_ON_FORK */,
        .sched_nice = nice, .sched_runtime = nanoseconds,
    };
    return (int)syscall(SYS_sched_setattr, thread, &attr, 0);
}

/// The calling thread's id (gettid(2), which glibc before 2.30 does not wrap).
static inline int clinux_thread_id(void) {
    return (int)syscall(SYS_gettid);
}

/// Names the calling thread (up to 15 bytes) as ps, top -H and /proc/PID/task/TID/comm show it.
static inline int clinux_name_calling_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

#endif
