/// The values bound to a statement's parameters: positional (`?`, `?NNN`) or named
/// (`:name`, `@name`, `$name`).
///
/// Values are always bound, never pasted into SQL text. A Swift value that cannot be
/// stored (NaN, a `UInt64` above `Int64.max`) is recorded and thrown when the
/// statement runs, so that array and dictionary literals stay non-throwing.
///
/// For example:
///
/// ```swift
/// try db.execute(sql: "INSERT INTO users(name, age) VALUES (?, ?)", arguments: ["Ann", 31])
/// try db.execute(sql: "UPDATE users SET age = :age WHERE id = :id", arguments: ["age": 32, "id": 1])
/// ```
public struct StatementArguments: Sendable, CustomStringConvertible {
    @usableFromInline
    package enum Storage: Sendable {
        case positional([DatabaseValue])
        /// One positional value, without an array (the common `WHERE id = ?` case).
        case single(DatabaseValue)
        /// Two positional values, without an array (a value and a key: `updateField`, a
        /// scoped lookup): no allocation per statement.
        case pair(DatabaseValue, DatabaseValue)
        case named([String: DatabaseValue])
    }

    @usableFromInline
    package var storage: Storage
    /// The first value that failed to convert; thrown when binding. Kept in a box: an
    /// inline `DALError?` made every copy of the arguments (one per statement run) copy
    /// five strings' worth of optional fields.
    @inlinable package var conversionError: DALError? {
        get { conversionFailure?.error }
        set { conversionFailure = newValue.map(BoxedError.init) }
    }
    @usableFromInline var conversionFailure: BoxedError?

    /// No arguments.
    ///
    /// For example, `try db.execute(sql: "DELETE FROM logs", arguments: StatementArguments())`.
    public init() {
        storage = .positional([])
    }

    /// Positional arguments, bound to parameters 1, 2, 3… in order.
    ///
    /// For example, `StatementArguments(["Ann", 31, nil as String?])`.
    public init(_ values: [(any DatabaseValueConvertible)?]) {
        var converted = [DatabaseValue]()
        converted.reserveCapacity(values.count)
        var error: DALError?
        for value in values {
            converted.append(Self.convert(value, &error))
        }
        storage = .positional(converted)
        conversionError = error
    }

    /// Positional arguments that are already ``DatabaseValue``s (no conversion).
    ///
    /// For example, `StatementArguments(values: [.integer(1), .text("a")])`.
    public init(values: [DatabaseValue]) {
        storage = Self.positional(values)
    }

    /// Positional storage for `values`: one value without an array.
    private static func positional(_ values: [DatabaseValue]) -> Storage {
        switch values.count {
        case 1: .single(values[0])
        case 2: .pair(values[0], values[1])
        default: .positional(values)
        }
    }

    /// One positional value that is already an ``DatabaseValue``.
    ///
    /// For example, `StatementArguments(value: .integer(1))`.
    @inlinable
    public init(value: DatabaseValue) {
        storage = .single(value)
    }

    /// Two positional values that are already converted, without an array.
    @usableFromInline
    init(_ first: DatabaseValue, _ second: DatabaseValue) {
        storage = .pair(first, second)
    }

    /// Named arguments; keys are parameter names without their `:`, `@` or `$` prefix.
    ///
    /// For example, `StatementArguments(named: ["id": 1, "name": "Ann"])`.
    public init(named values: [String: (any DatabaseValueConvertible)?]) {
        var converted = [String: DatabaseValue](minimumCapacity: values.count)
        var error: DALError?
        for (name, value) in values {
            converted[Self.strippedName(name)] = Self.convert(value, &error)
        }
        storage = .named(converted)
        conversionError = error
    }

    /// Whether a value is text in SwiftDAL's form of a `Date` (`YYYY-MM-DD HH:MM:SS.SSS`):
    /// the text a server must read as UTC.
    package var containsDateText: Bool {
        switch storage {
        case .single(let value): return value.isDateText
        case .pair(let first, let second): return first.isDateText || second.isDateText
        case .positional(let values): return values.contains { $0.isDateText }
        case .named(let values): return values.values.contains { $0.isDateText }
        }
    }

    /// The number of values (positional or named).
    ///
    /// For example, `StatementArguments([1, "a"]).count == 2`.
    public var count: Int {
        switch storage {
        case .positional(let values): values.count
        case .single: 1
        case .pair: 2
        case .named(let values): values.count
        }
    }

    /// Whether there are no arguments.
    public var isEmpty: Bool {
        switch storage {
        case .positional(let values): values.isEmpty
        case .single, .pair: false
        case .named(let values): values.isEmpty
        }
    }

    /// Positional values, or `nil` when the arguments are named.
    public var positionalValues: [DatabaseValue]? {
        switch storage {
        case .positional(let values): values
        case .single(let value): [value]
        case .pair(let first, let second): [first, second]
        case .named: nil
        }
    }

    /// The number of positional values, or `nil` when the arguments are named.
    package var positionalCount: Int? {
        switch storage {
        case .positional(let values): values.count
        case .single: 1
        case .pair: 2
        case .named: nil
        }
    }

    /// Calls `body` with the positional values where they are stored (no array is made
    /// for a single value); with no values when the arguments are named.
    @inlinable
    package func withPositionalValues<R>(_ body: (UnsafeBufferPointer<DatabaseValue>) throws -> R) rethrows -> R {
        switch storage {
        case .positional(let values): return try values.withUnsafeBufferPointer(body)
        case .single(let value):
            return try withUnsafePointer(to: value) { try body(UnsafeBufferPointer(start: $0, count: 1)) }
        case .pair(let first, let second):
            // A homogeneous tuple is laid out as an array of its elements.
            return try withUnsafePointer(to: (first, second)) { pair in
                try pair.withMemoryRebound(to: DatabaseValue.self, capacity: 2) {
                    try body(UnsafeBufferPointer(start: $0, count: 2))
                }
            }
        case .named: return try body(UnsafeBufferPointer(start: nil, count: 0))
        }
    }

    /// Named values already converted (for layers above that combine arguments).
    package init(namedValues: [String: DatabaseValue]) {
        storage = .named(namedValues)
    }

    /// The named values, or `nil` when the arguments are positional.
    package var namedValues: [String: DatabaseValue]? {
        if case .named(let values) = storage { return values }
        return nil
    }

    /// Appends a positional value (used by ``SQL`` interpolation).
    @usableFromInline
    mutating func append(_ value: (any DatabaseValueConvertible)?) {
        // Not `convert(value, &conversionError)`: through the computed property, every
        // append read and wrote the boxed error, and an optional error on the way cost its
        // destruction (~250 instructions an interpolated value in all).
        guard let value else { return append(converted: .null) }
        do {
            append(converted: try value.databaseValue())
        } catch {
            if conversionFailure == nil { conversionError = Self.conversionFailure(error, of: value) }
            append(converted: .null)
        }
    }

    /// Appends a positional value that is already converted, in amortized constant time.
    @usableFromInline
    package mutating func append(converted: DatabaseValue) {
        // The first value (an interpolation's usual one): no array, and none of the
        // storage's copies below (~150 instructions a call).
        if isEmpty, case .positional = storage {
            storage = .single(converted)
            return
        }
        switch storage {
        case .positional(var values):
            // Release the storage's reference first, so that `values` is unique and grows
            // in place (appending to a copy made every append linear: quadratic lists).
            storage = .positional([])
            if values.isEmpty {
                storage = .single(converted)
            } else {
                values.append(converted)
                storage = .positional(values)
            }
        case .single(let first):
            storage = .pair(first, converted)
        case .pair(let first, let second):
            storage = .positional([first, second, converted])
        case .named:
            break
        }
    }

    /// Appends positional values that are already converted, in time linear in their number.
    package mutating func append(converted more: [DatabaseValue]) {
        guard !more.isEmpty else { return }
        switch storage {
        case .positional(var values):
            storage = .positional([])
            values.append(contentsOf: more)
            storage = Self.positional(values)
        case .single(let first):
            storage = Self.positional([first] + more)
        case .pair(let first, let second):
            storage = .positional([first, second] + more)
        case .named:
            break
        }
    }

    /// `value`, then these positional arguments; throws for named arguments.
    @inlinable
    package func prepending(_ value: DatabaseValue) throws -> StatementArguments {
        // The usual call (`updateField`'s value before a one-value key): a pair made in
        // the caller, without copying these arguments (~400 instructions a call).
        if conversionFailure == nil, case .single(let first) = storage { return StatementArguments(value, first) }
        return try prependingToAny(value)
    }

    /// ``prepending(_:)`` for any arguments.
    @usableFromInline
    func prependingToAny(_ value: DatabaseValue) throws -> StatementArguments {
        var result = self
        switch storage {
        case .positional(let values):
            var all = [DatabaseValue]()
            all.reserveCapacity(values.count + 1)
            all.append(value)
            for existing in values { all.append(existing) }
            result.storage = .positional(all)
        case .single(let first):
            result.storage = .pair(value, first)
        case .pair(let first, let second):
            result.storage = .positional([value, first, second])
        case .named:
            throw DALError(.argumentMismatch, "positional and named arguments cannot be combined")
        }
        return result
    }

    /// Appends positional values; throws when either side is named.
    package mutating func append(contentsOf other: StatementArguments) throws {
        // Case by case, not through `positionalValues`: an array made for each side, and
        // a third for the result, on every scoped call (~400 instructions).
        if case .named = other.storage {
            guard positionalCount == 0 else {
                throw DALError(.argumentMismatch, "positional and named arguments cannot be combined")
            }
            self = other
            return
        }
        if case .named = storage {
            guard other.isEmpty else {
                throw DALError(.argumentMismatch, "positional and named arguments cannot be combined")
            }
            return
        }
        switch other.storage {
        case .single(let value): append(converted: value)
        case .pair(let first, let second):
            append(converted: first)
            append(converted: second)
        case .positional(let values): append(converted: values)
        case .named: break
        }
        if conversionError == nil { conversionError = other.conversionError }
    }

    /// The values, as `[1, 'Ann']` or `[name: 'Ann']`: bound values, so log it with care (errors leave it out).
    public var description: String {
        switch storage {
        case .positional(let values):
            "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .single(let value):
            "[\(value)]"
        case .pair(let first, let second):
            "[\(first), \(second)]"
        case .named(let values):
            "["
                + values.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
                .joined(separator: ", ") + "]"
        }
    }

    package static func strippedName(_ name: String) -> String {
        guard let first = name.first, first == ":" || first == "@" || first == "$" else { return name }
        return String(name.dropFirst())
    }

    static func convert(_ value: (any DatabaseValueConvertible)?, _ firstError: inout DALError?) -> DatabaseValue {
        guard let value else { return .null }
        do {
            return try value.databaseValue()
        } catch {
            if firstError == nil { firstError = conversionFailure(error, of: value) }
            return .null
        }
    }

    /// The error recorded when `value` throws `error` as it converts.
    private static func conversionFailure(_ error: any Error, of value: any DatabaseValueConvertible) -> DALError {
        error as? DALError
            ?? DALError(.invalidValue, "cannot convert a \(type(of: value)): \(error)", underlying: error)
    }
}

extension StatementArguments: ExpressibleByArrayLiteral {
    /// For example, `let arguments: StatementArguments = ["Ann", 31]`.
    public init(arrayLiteral elements: (any DatabaseValueConvertible)?...) {
        self.init(elements)
    }
}

extension StatementArguments: ExpressibleByDictionaryLiteral {
    /// For example, `let arguments: StatementArguments = ["name": "Ann", "age": 31]`.
    public init(dictionaryLiteral elements: (String, (any DatabaseValueConvertible)?)...) {
        var values = [String: (any DatabaseValueConvertible)?]()
        for (key, value) in elements { values[key] = value }
        self.init(named: values)
    }
}

/// A ``DALError`` in a box, for values that carry one rarely and are copied often (an
/// inline optional error would be copied and destroyed, all its fields, with every copy).
@usableFromInline
final class BoxedError: Sendable {
    @usableFromInline let error: DALError
    @usableFromInline init(_ error: DALError) { self.error = error }
}
