internal import Glibc
public import SystemPackage

/// Runs a system call until it is not interrupted by a signal; returns its result, or
/// throws its `errno`. For the calls swift-system does not wrap (sockets, poll, waitpid).
@discardableResult
public func systemCall<Result: FixedWidthInteger>(_ call: () -> Result) throws(Errno) -> Result {
    while true {
        let result = call()
        if result >= 0 { return result }
        let error = Errno(rawValue: errno)
        if error != .interrupted { throw error }
    }
}
