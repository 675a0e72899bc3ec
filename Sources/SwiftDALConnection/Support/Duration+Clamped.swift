extension Duration {
    /// This duration in whole nanoseconds, clamped to `Int64`'s range: a limit of
    /// centuries is as good as forever, and converting it never traps.
    ///
    /// For example, `Duration.seconds(Int64.max).clampedNanoseconds == Int64.max`.
    package var clampedNanoseconds: Int64 { clamped(per: 1_000_000_000) }

    /// This duration in whole milliseconds, clamped to `Int64`'s range.
    ///
    /// For example, `Duration.milliseconds(1500).clampedMilliseconds == 1500`.
    package var clampedMilliseconds: Int64 { clamped(per: 1000) }

    /// Whole units of which a second holds `unitsPerSecond`.
    private func clamped(per unitsPerSecond: Int64) -> Int64 {
        let (seconds, attoseconds) = components
        let limit: Int64 = seconds < 0 || (seconds == 0 && attoseconds < 0) ? .min : .max
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: unitsPerSecond)
        guard !overflow else { return limit }
        // attoseconds has the sign of seconds and is under one second.
        let (total, overflowAgain) = whole.addingReportingOverflow(
            attoseconds / (1_000_000_000_000_000_000 / unitsPerSecond))
        return overflowAgain ? limit : total
    }
}
