internal import ClickawayX11

/// Requests sent together, their replies collected in order as they come.
final class Batch<Value> {
    private let pending: [PendingReply<Value>]
    private(set) var results: [Result<Value, XError>] = []

    init(_ pending: [PendingReply<Value>]) {
        self.pending = pending
        results.reserveCapacity(pending.count)
    }

    /// Collects what has come (`wait`: waits for all); whether every reply is in.
    func collect(_ x: XConnection, wait: Bool) -> Bool {
        while results.count < pending.count {
            switch wait ? x.wait(pending[results.count]) : x.poll(pending[results.count]) {
            case .notYet: return false
            case .value(let value): results.append(.success(value))
            case .failed(let error): results.append(.failure(error))
            }
        }
        return true
    }

    func discard(_ x: XConnection) {
        for p in pending[results.count...] { x.discard(p) }
        results.removeAll()
    }
}
