import Foundation
import Glibc
import Synchronization

/// An editor saving `text` in place over and over, on a thread of its own until `stop()`:
/// truncate, half the text, `gap`, the rest, close, then `pause`. Between the two writes the
/// file is half-written; a load that reads it then must not apply it.
public final class InPlaceSaver: Sendable {
    private final class Flag: Sendable { let on = Atomic(true) }
    private let saving = Flag()

    public init(_ text: String, to path: String, gap: useconds_t, pause: useconds_t) {
        let bytes = Array(text.utf8)
        Thread { [saving] in
            while saving.on.load(ordering: .relaxed) {
                let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
                _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, bytes.count / 2) }
                usleep(gap)
                _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + bytes.count / 2, bytes.count - bytes.count / 2) }
                close(fd)
                usleep(pause)
            }
        }.start()
    }

    public func stop() { saving.on.store(false, ordering: .relaxed) }
}
