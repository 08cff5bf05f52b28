internal import CLinux
internal import Glibc

/// Memory a thread freed in bulk (a replaced configuration of tens of thousands of popups),
/// given back to the system: glibc otherwise keeps those pages for later allocations, and a
/// daemon that ran a 4 MiB configuration stays at 200 MB after a reload to a small one.
public enum FreedMemory {
    /// Gives back the pages of freed memory in every arena (malloc_trim); it takes each
    /// arena's lock in turn, so call it off the loop, and rarely.
    public static func giveBack() {
        _ = clinux_give_back_freed_memory()
    }
}
