import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Parsers for values in PostgreSQL's text output format, reading libpq's bytes in place
/// (no `String` is built for a number). Each returns `nil` for bytes it does not accept;
/// the caller then reads the value as text.
///
/// For example:
///
/// ```swift
/// "-42".utf8.withContiguousStorageIfAvailable { PostgresText.integer($0) }  // -42
/// ```
package enum PostgresText {
    /// A decimal integer (`int2`, `int4`, `int8`, `oid`, an integral `numeric`), or `nil`
    /// when the bytes are not one or it does not fit `Int64`.
    package static func integer(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        var negative = false
        if bytes.first == UInt8(ascii: "-") {
            negative = true
            index = 1
        }
        guard index < bytes.count else { return nil }
        var value: Int64 = 0
        if bytes.count - index <= 18 {  // 18 digits cannot overflow: no checks per digit
            while index < bytes.count {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value &* 10 &+ Int64(digit)
                index += 1
            }
            return negative ? 0 &- value : value
        }
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) =
                negative
                ? times.subtractingReportingOverflow(Int64(digit)) : times.addingReportingOverflow(Int64(digit))
            guard !overflow1 && !overflow2 else { return nil }
            value = next
            index += 1
        }
        return value
    }

    /// A float as PostgreSQL writes it (`float4`, `float8`: the shortest digits that read
    /// back exactly, `1e-05` and `1.5e+300` forms, `Infinity`, `NaN`), or `nil` for `NaN`
    /// (SQLite cannot hold it either: it reads as text, a conversion error) and for bytes
    /// that are not a float. `bytes` must be followed by a NUL, as libpq ends every value.
    ///
    /// Most values take the exact fast path (Clinger's): when the digits, read as an
    /// integer, hold in 53 bits and the power of ten is at most 22, both are exact doubles,
    /// and one IEEE multiplication or division rounds their product correctly: the same
    /// double `strtod` returns, in about a tenth of its instructions (callgrind, W2: `strtod`
    /// cost ~580 instructions per value). The others (more digits, large exponents,
    /// `Infinity`) go to `strtod`. Under a process locale whose decimal point is not `.`,
    /// `strtod` stops early: that is caught (it must read every byte), and `Double(_:)`,
    /// which ignores the locale, reads the value instead.
    package static func double(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        if let exact = exactDouble(bytes) { return exact }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return nil }
        var end: UnsafeMutablePointer<CChar>?
        var value: Double? = base.withMemoryRebound(to: CChar.self, capacity: bytes.count + 1) { strtod($0, &end) }
        if Int(bitPattern: end) - Int(bitPattern: base) != bytes.count {
            value = Double(String(decoding: bytes, as: UTF8.self))
        }
        return value.flatMap { $0.isNaN ? nil : $0 }
    }

    /// The powers of ten that are exact doubles.
    private static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22
    ]

    /// `[-]digits[.digits][e[+|-]digits]` when its value is exact by Clinger's fast path,
    /// else `nil` (the caller then asks `strtod`).
    private static func exactDouble(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        let count = bytes.count
        var index = 0
        let negative = count > 0 && bytes[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        let limit: UInt64 = 1 << 53
        var digits: UInt64 = 0
        var exponent = 0
        var sawDigit = false
        while index < count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            digits = digits &* 10 &+ UInt64(digit)
            guard digits <= limit else { return nil }
            sawDigit = true
            index += 1
        }
        if index < count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < count {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { break }
                digits = digits &* 10 &+ UInt64(digit)
                guard digits <= limit else { return nil }
                exponent -= 1
                sawDigit = true
                index += 1
            }
        }
        guard sawDigit else { return nil }
        if index < count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            var negativeExponent = false
            if index < count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                negativeExponent = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            var written = 0
            var sawExponentDigit = false
            while index < count {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10, written < 1000 else { return nil }
                written = written * 10 + Int(digit)
                sawExponentDigit = true
                index += 1
            }
            guard sawExponentDigit else { return nil }
            exponent += negativeExponent ? -written : written
        }
        guard index == count, exponent >= -22, exponent <= 22 else { return nil }
        var value = Double(digits)  // exact: at most 2^53
        if exponent < 0 {
            value /= exactPowersOfTen[-exponent]
        } else {
            value *= exactPowersOfTen[exponent]
        }
        return negative ? -value : value
    }

    /// `bytea` in PostgreSQL's hex output format (`\x0aff…`).
    static func bytea(_ bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x"), bytes.count % 2 == 0
        else {
            return nil
        }
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var data = Data(capacity: (bytes.count - 2) / 2)
        var index = 2
        while index < bytes.count {
            guard let high = nibble(bytes[index]), let low = nibble(bytes[index + 1]) else { return nil }
            data.append(high << 4 | low)
            index += 2
        }
        return data
    }
}
