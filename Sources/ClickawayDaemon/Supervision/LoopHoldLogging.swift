internal import ClickawaySystem
internal import Logging

extension LoopHold {
    /// `metadata` with how long the loop was held so far: "microseconds" of wall time and
    /// "cpu_microseconds" of the loop's own CPU time (bench/bigconfig and bench/runtime read them).
    func logged(_ metadata: Logger.Metadata) -> Logger.Metadata {
        let held = microseconds
        return metadata.merging(["microseconds": "\(held.wall)", "cpu_microseconds": "\(held.cpu)"]) { $1 }
    }
}
