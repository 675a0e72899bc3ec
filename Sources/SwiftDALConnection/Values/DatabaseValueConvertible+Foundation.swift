public import Foundation

// MARK: - Date

/// Dates are stored as UTC text `YYYY-MM-DD HH:MM:SS.SSS` (millisecond precision).
///
/// That encoding sorts chronologically as text, is what SQLite's own date functions
/// read, and extends the format SQLite's `CURRENT_TIMESTAMP` writes
/// (`YYYY-MM-DD HH:MM:SS`). Reading accepts: that format with or without the
/// fraction (any number of fraction digits), a `T` instead of the space, an optional
/// `Z`, `±HH:MM`, `±HHMM` or `±HH` offset (PostgreSQL's `timestamptz` text), a bare date `YYYY-MM-DD`, and `INTEGER` or `REAL` seconds
/// since 1970 (SQLite's `unixepoch()`). Written: years 0000–9999. Read also: PostgreSQL's
/// years past 9999 (up to six digits), its `BC` suffix (year N BC is the proleptic year
/// 1 − N), and its offsets with seconds (`+05:53:28`, the local mean time of old dates in
/// some zones). PostgreSQL's `infinity` and `-infinity` are no `Date`: read them as a
/// `String`.
///
/// For example:
///
/// ```swift
/// try Date(timeIntervalSince1970: 0).databaseValue()   // .text("1970-01-01 00:00:00.000")
/// Date(databaseValue: "2024-02-29 12:00:00")         // what CURRENT_TIMESTAMP writes
/// ```
extension Date: DatabaseValueConvertible {
    /// The date as UTC text, `YYYY-MM-DD HH:MM:SS.SSS`; throws ``DALError/Code/invalidValue``
    /// for a date that is not finite or falls outside the years 0000–9999.
    public func databaseValue() throws -> DatabaseValue {
        guard let text = DateCoding.format(self) else {
            // Not `\(self)`: Date.description traps on a NaN date (found by fuzzing); and the
            // value stays out of the message (it may be personal data).
            throw DALError(.invalidValue, "a date that is not a finite time in the years 0000-9999 cannot be stored")
        }
        return .text(text)
    }

    /// A date from any of the text forms above, or from `INTEGER`/`REAL` seconds since
    /// 1970; `nil` for other text, blobs and `NULL`.
    public init?(databaseValue: DatabaseValue) {
        switch databaseValue {
        case .text(let text):
            guard let date = DateCoding.parse(text) else { return nil }
            self = date
        case .integer(let seconds):
            self = Date(timeIntervalSince1970: TimeInterval(seconds))
        case .real(let seconds):
            guard seconds.isFinite else { return nil }
            self = Date(timeIntervalSince1970: seconds)
        default:
            return nil
        }
    }
}

extension DatabaseValue {
    /// Whether this is text in the canonical `Date` form, `YYYY-MM-DD HH:MM:SS.SSS`.
    package var isDateText: Bool {
        guard case .text(let text) = self, text.utf8.count == 23 else { return false }
        for (index, byte) in text.utf8.enumerated() {
            switch index {
            case 4, 7: guard byte == UInt8(ascii: "-") else { return false }
            case 10: guard byte == UInt8(ascii: " ") else { return false }
            case 13, 16: guard byte == UInt8(ascii: ":") else { return false }
            case 19: guard byte == UInt8(ascii: ".") else { return false }
            default: guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return false }
            }
        }
        return true
    }
}

/// The canonical date text encoding, written by hand: `DateFormatter` is slow, and
/// locale- and calendar-sensitive.
enum DateCoding {
    private static let millisecondsPerDay: Int64 = 86_400_000

    static func format(_ date: Date) -> String? {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds.isFinite, let total = Int64(exactly: milliseconds) else { return nil }
        var days = total / millisecondsPerDay
        var remainder = total % millisecondsPerDay
        if remainder < 0 {
            days -= 1
            remainder += millisecondsPerDay
        }
        let (year, month, day) = civilDate(fromDays: days)
        guard (0...9999).contains(year) else { return nil }
        let hour = remainder / 3_600_000
        let minute = remainder / 60_000 % 60
        let second = remainder / 1000 % 60
        let millisecond = remainder % 1000
        var bytes = [UInt8]()
        bytes.reserveCapacity(23)
        func append(_ value: Int64, digits: Int) {
            var divisor: Int64 = 1
            for _ in 1..<digits { divisor *= 10 }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        append(year, digits: 4)
        bytes.append(UInt8(ascii: "-"))
        append(month, digits: 2)
        bytes.append(UInt8(ascii: "-"))
        append(day, digits: 2)
        bytes.append(UInt8(ascii: " "))
        append(hour, digits: 2)
        bytes.append(UInt8(ascii: ":"))
        append(minute, digits: 2)
        bytes.append(UInt8(ascii: ":"))
        append(second, digits: 2)
        bytes.append(UInt8(ascii: "."))
        append(millisecond, digits: 3)
        return String(decoding: bytes, as: UTF8.self)
    }

    static func parse(_ text: String) -> Date? {
        var bytes = Array(text.utf8)
        // PostgreSQL's era suffix: year N BC is the proleptic year 1 - N.
        let beforeChrist = bytes.count > 3 && bytes.suffix(3).elementsEqual(" BC".utf8)
        if beforeChrist { bytes.removeLast(3) }
        var scanner = Scanner(bytes)
        // Four digits, or up to six (PostgreSQL writes years past 9999 with their digits).
        guard var year = scanner.number(digits: 4) else { return nil }
        for _ in 0..<2 {
            guard let digit = scanner.number(digits: 1) else { break }
            year = year * 10 + digit
        }
        if beforeChrist {
            guard year > 0 else { return nil }
            year = 1 - year
        }
        guard scanner.skip("-"),
            let month = scanner.number(digits: 2), (1...12).contains(month), scanner.skip("-"),
            let day = scanner.number(digits: 2), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        var seconds = Double(days(fromCivil: year, month, day)) * 86_400
        if scanner.skip(" ") || scanner.skip("T") {
            guard let hour = scanner.number(digits: 2), hour < 24, scanner.skip(":"),
                let minute = scanner.number(digits: 2), minute < 60
            else { return nil }
            seconds += Double(hour * 3600 + minute * 60)
            if scanner.skip(":") {
                guard let second = scanner.number(digits: 2), second < 60 else { return nil }
                seconds += Double(second)
                if scanner.skip(".") {
                    guard let fraction = scanner.fraction() else { return nil }
                    seconds += fraction
                }
            }
            if scanner.skip("Z") {
                // UTC
            } else if let sign = scanner.sign() {
                // ±HH:MM, ±HHMM, or ±HH (PostgreSQL writes "+00"), and ±HH:MM:SS (PostgreSQL's
                // local mean time offsets of old dates in zones such as Asia/Kolkata: +05:53:28).
                guard let hours = scanner.number(digits: 2), hours < 24 else { return nil }
                var minutes: Int64 = 0
                var offsetSeconds: Int64 = 0
                if scanner.skip(":") {
                    guard let value = scanner.number(digits: 2) else { return nil }
                    minutes = value
                    if scanner.skip(":") {
                        guard let value = scanner.number(digits: 2), value < 60 else { return nil }
                        offsetSeconds = value
                    }
                } else if !scanner.atEnd {
                    guard let value = scanner.number(digits: 2) else { return nil }
                    minutes = value
                }
                guard minutes < 60 else { return nil }
                seconds -= sign * Double(hours * 3600 + minutes * 60 + offsetSeconds)
            }
        }
        guard scanner.atEnd else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
    static func civilDate(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// A proleptic Gregorian date to days since 1970-01-01.
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let adjustedYear = month <= 2 ? year - 1 : year
        let era = (adjustedYear >= 0 ? adjustedYear : adjustedYear - 399) / 400
        let yearOfEra = adjustedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        mutating func number(digits: Int) -> Int64? {
            guard index + digits <= bytes.count else { return nil }
            var value: Int64 = 0
            for offset in 0..<digits {
                let byte = bytes[index + offset]
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            index += digits
            return value
        }

        mutating func fraction() -> Double? {
            var value = 0.0
            var scale = 0.1
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                value += Double(bytes[index] - UInt8(ascii: "0")) * scale
                scale /= 10
                index += 1
            }
            return index > start ? value : nil
        }

        mutating func sign() -> Double? {
            if skip("+") { return 1 }
            if skip("-") { return -1 }
            return nil
        }
    }
}

// MARK: - UUID

/// UUIDs are stored as lowercase canonical text (`"8f0c…-…"`); reading also accepts
/// uppercase text and a 16-byte `BLOB`.
///
/// For example, `try UUID().databaseValue()` is a 36-character `.text`.
extension UUID: DatabaseValueConvertible {
    /// The UUID as lowercase canonical text.
    public func databaseValue() -> DatabaseValue { .text(uuidString.lowercased()) }

    /// A UUID from its text (either case) or a 16-byte blob; `nil` for anything else.
    public init?(databaseValue: DatabaseValue) {
        switch databaseValue {
        case .text(let text):
            guard let uuid = UUID(uuidString: text) else { return nil }
            self = uuid
        case .blob(let data):
            guard data.count == 16 else { return nil }
            let b = [UInt8](data)
            self = UUID(
                uuid: (
                    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                    b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]
                ))
        default:
            return nil
        }
    }
}

// MARK: - Decimal

/// Decimals are stored as text (`"12.345"`), so no digit is lost to binary floating
/// point. Text compares as text: order by such a column with care, or store minor
/// units as an integer. In a column of `NUMERIC` affinity (`NUMERIC`, `DECIMAL(10,2)`)
/// SQLite itself turns number-like text into `INTEGER` or `REAL`, keeping 15
/// significant digits: use a `TEXT` column for more. Reading accepts `INTEGER`, and
/// `REAL` as the shortest decimal that reads back as the same double (`0.99` stored as
/// a `REAL` reads as `0.99`, not `0.98999999999999999112`).
///
/// For example, `try Decimal(string: "0.1")!.databaseValue() == .text("0.1")`.
extension Decimal: DatabaseValueConvertible {
    /// The decimal as text, without loss; throws ``DALError/Code/invalidValue`` for NaN.
    public func databaseValue() throws -> DatabaseValue {
        guard !isNaN else {
            throw DALError(.invalidValue, "a NaN Decimal cannot be stored")
        }
        return .text(description)
    }

    /// A decimal from numeric text, an `INTEGER`, or a `REAL` (its shortest decimal form);
    /// `nil` for text that is not a number, blobs and `NULL`, and for a number that a
    /// `Decimal` cannot hold exactly (more than 38 significant digits, or a power of ten
    /// out of its range): never a rounded value.
    public init?(databaseValue: DatabaseValue) {
        switch databaseValue {
        case .text(let text):
            guard let decimal = Self.exactly(text) else { return nil }
            self = decimal
        case .integer(let value):
            self = Decimal(value)
        case .real(let value):
            // Double's description is the shortest text that reads back as the same value.
            guard value.isFinite, let decimal = Self.exactly("\(value)") else { return nil }
            self = decimal
        default:
            return nil
        }
    }

    /// The decimal `text` spells, if a `Decimal` holds it exactly. (Decimal(string:)
    /// accepts a prefix, "12abc" is 12, and rounds what does not fit its 38 digits.)
    static func exactly(_ text: String) -> Decimal? {
        guard Self.isDecimalLiteral(text),
            let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !decimal.isNaN,
            let wanted = canonicalForm(text), canonicalForm(decimal.description) == wanted
        else { return nil }
        return decimal
    }

    /// A decimal literal's value as its sign, its significant digits and the power of ten
    /// of the last one (zero: no digits, power 0), so that two spellings of one value
    /// compare equal; `nil` when the power does not fit an `Int`.
    package static func canonicalForm(_ text: String) -> CanonicalDecimal? {
        var bytes = text.utf8[...]
        let negative = bytes.first == UInt8(ascii: "-")
        if negative || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        var digits: [UInt8] = []
        var fractionDigits = 0
        var inFraction = false
        while let byte = bytes.first, byte != UInt8(ascii: "e"), byte != UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if byte == UInt8(ascii: ".") {
                inFraction = true
                continue
            }
            if digits.isEmpty && byte == UInt8(ascii: "0") {
                if inFraction { fractionDigits += 1 }
                continue
            }
            digits.append(byte)
            if inFraction { fractionDigits += 1 }
        }
        var power = 0
        if !bytes.isEmpty {
            guard let exponent = Int(String(decoding: bytes.dropFirst(), as: UTF8.self)) else { return nil }
            power = exponent
        }
        var trailingZeros = 0
        while digits.last == UInt8(ascii: "0") {
            digits.removeLast()
            trailingZeros += 1
        }
        guard !digits.isEmpty else { return CanonicalDecimal(negative: false, digits: [], power: 0) }
        let (shifted, overflow) = power.subtractingReportingOverflow(fractionDigits - trailingZeros)
        guard !overflow else { return nil }
        return CanonicalDecimal(negative: negative, digits: digits, power: shifted)
    }

    /// See ``canonicalForm(_:)``.
    package struct CanonicalDecimal: Equatable {
        let negative: Bool
        let digits: [UInt8]
        let power: Int
    }

    /// Whether `text` is exactly `[+-]digits[.digits][e[+-]digits]`.
    static func isDecimalLiteral(_ text: String) -> Bool {
        var bytes = text.utf8[...]
        func digits() -> Int {
            let count = bytes.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        var mantissa = digits()
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            mantissa += digits()
        }
        guard mantissa > 0 else { return false }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}
