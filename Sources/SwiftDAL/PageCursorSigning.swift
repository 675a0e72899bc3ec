import Foundation
import SwiftDALConnection
import SwiftDALIDAL

/// The secret that signs keyset-paging cursors (``PageCursor``) with HMAC-SHA256, so
/// that a client can hold a cursor but not forge or alter one.
///
/// A DAL uses ``processDefault`` unless its ``ReadOnlyDAL/cursorSigningKey`` hook says
/// otherwise. That key is random, made once per process: cursors then stop working when
/// the process restarts, and a cursor issued by one instance of a service is refused by
/// another. A service that runs on several machines, or whose clients keep cursors
/// across deployments, must give every instance the same secret (from its
/// configuration, not its code), at least 16 bytes, and keep it private.
///
/// For example:
///
/// ```swift
/// // At startup, from the service's configuration (the same on every instance):
/// let cursorKey = try CursorSigningKey(secret: configuration.cursorSecret)
///
/// final class NoteDAL: BaseDAL<Note>, @unchecked Sendable {
///     let key: CursorSigningKey
///     init(database: any DatabaseWriter, tenant: Int64, cursorKey: CursorSigningKey) {
///         key = cursorKey
///         super.init(database: database, tenant: tenant)
///     }
///     override var cursorSigningKey: CursorSigningKey { key }
/// }
/// ```
public struct CursorSigningKey: Sendable, CustomStringConvertible {
    /// The HMAC key, derived from the secret (so that the secret itself is never the key
    /// of anything else SwiftDAL signs).
    let macKey: [UInt8]

    /// A key from `secret`, which must hold at least 16 bytes (``DALError/Code/invalidValue``
    /// otherwise).
    ///
    /// For example, `try CursorSigningKey(secret: Data(base64Encoded: configuration.cursorSecret) ?? Data())`.
    public init(secret: some Collection<UInt8>) throws {
        guard secret.count >= 16 else {
            throw DALError(.invalidValue, "a cursor signing secret needs at least 16 bytes, not \(secret.count)")
        }
        self.init(checkedSecret: secret)
    }

    private init(checkedSecret secret: some Collection<UInt8>) {
        macKey = HMACSHA256.authenticationCode(for: Array("SwiftDAL page cursor v1".utf8), key: secret)
    }

    /// A key from the UTF-8 bytes of `secret` (at least 16 bytes).
    ///
    /// For example, `try CursorSigningKey(secret: "a long random string from the configuration")`.
    public init(secret: String) throws {
        try self.init(secret: Array(secret.utf8))
    }

    /// A random key made once per process (see the type's documentation for what that
    /// means for restarts and for services on several machines).
    ///
    /// For example, `override var cursorSigningKey: CursorSigningKey { .processDefault }`.
    public static let processDefault = CursorSigningKey(checkedSecret: randomSecret())

    /// 32 bytes from the kernel's CSPRNG (`getrandom` on Linux): ``processDefault``'s secret.
    static func randomSecret() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// Never the secret.
    public var description: String { "CursorSigningKey(…)" }
}

/// What a cursor token carries: a fingerprint of the query's shape (table, condition
/// text, scope, tenant), its order, and the last row's values of the order's columns.
struct CursorContent: Equatable {
    /// 16 bytes of SHA-256 over the shape.
    var shape: [UInt8]
    var columns: [String]
    var directions: [SortDirection]
    var values: [DatabaseValue]
}

/// The token format: version 1, the shape, the terms, the values, then the HMAC-SHA256
/// of all of that; URL-safe base64 without padding.
enum CursorCodec {
    static let version: UInt8 = 1
    static let shapeLength = 16
    /// Tokens longer than this are refused before decoding.
    static let maximumTokenLength = 65_536

    /// The fingerprint of a query shape.
    static func shape(_ parts: [String]) -> [UInt8] {
        var bytes = [UInt8]()
        for part in parts {
            appendLength(part.utf8.count, to: &bytes)
            bytes.append(contentsOf: part.utf8)
        }
        return Array(SHA256.hash(bytes).prefix(shapeLength))
    }

    static func encode(_ content: CursorContent, key: CursorSigningKey) -> String {
        var bytes: [UInt8] = [version]
        bytes.append(contentsOf: content.shape)
        bytes.append(UInt8(content.columns.count))
        for (column, direction) in zip(content.columns, content.directions) {
            bytes.append(direction == .ascending ? 0 : 1)
            appendLength(column.utf8.count, to: &bytes)
            bytes.append(contentsOf: column.utf8)
        }
        for value in content.values { append(value, to: &bytes) }
        bytes.append(contentsOf: HMACSHA256.authenticationCode(for: bytes, key: key.macKey))
        return urlSafe(Data(bytes))
    }

    /// URL-safe base64 without padding.
    private static func urlSafe(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The content of `token`, or why it is refused (the signature is checked before
    /// anything else is read).
    static func decode(_ token: String, key: CursorSigningKey) throws(Refusal) -> CursorContent {
        guard !token.isEmpty, token.utf8.count <= maximumTokenLength else { throw Refusal("it is empty or too long") }
        guard
            token.utf8.allSatisfy({ byte in
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }), token.utf8.count % 4 != 1
        else { throw Refusal("it is not URL-safe base64") }
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { throw Refusal("it is not URL-safe base64") }
        // One token per content: unused trailing bits must be zero, as encode writes them.
        guard urlSafe(data) == token else { throw Refusal("it is not in canonical form") }
        let bytes = [UInt8](data)
        guard bytes.count > SHA256.digestLength + 1 + shapeLength else { throw Refusal("it is truncated") }
        let body = Array(bytes.dropLast(SHA256.digestLength))
        let tag = Array(bytes.suffix(SHA256.digestLength))
        guard HMACSHA256.constantTimeEquals(HMACSHA256.authenticationCode(for: body, key: key.macKey), tag) else {
            throw Refusal("its signature does not match (altered, truncated, or signed with another key)")
        }
        var reader = Reader(bytes: body)
        guard try reader.byte() == version else { throw Refusal("it has an unknown version") }
        let shape = try reader.bytes(shapeLength)
        let count = Int(try reader.byte())
        guard count >= 1 else { throw Refusal("it names no column") }
        var columns = [String]()
        var directions = [SortDirection]()
        for _ in 0..<count {
            switch try reader.byte() {
            case 0: directions.append(.ascending)
            case 1: directions.append(.descending)
            default: throw Refusal("it has an unknown sort direction")
            }
            columns.append(try reader.text())
        }
        var values = [DatabaseValue]()
        for _ in 0..<count { values.append(try reader.value()) }
        guard reader.isAtEnd else { throw Refusal("it has trailing bytes") }
        return CursorContent(shape: shape, columns: columns, directions: directions, values: values)
    }

    struct Refusal: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private static func appendLength(_ length: Int, to bytes: inout [UInt8]) {
        var rest = UInt64(length)
        repeat {
            let low = UInt8(rest & 0x7F)
            rest >>= 7
            bytes.append(rest == 0 ? low : low | 0x80)
        } while rest != 0
    }

    /// `value` in the token's encoding, as hex text (for shape fingerprints).
    static func canonicalText(_ value: DatabaseValue) -> String {
        var bytes = [UInt8]()
        append(value, to: &bytes)
        return bytes.map { String($0, radix: 16) }.joined(separator: ".")
    }

    private static func append(_ value: DatabaseValue, to bytes: inout [UInt8]) {
        func appendUInt64(_ number: UInt64) {
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: number >> UInt64(shift)))
            }
        }
        switch value {
        case .null:
            bytes.append(0)
        case .integer(let integer):
            bytes.append(1)
            appendUInt64(UInt64(bitPattern: integer))
        case .real(let double):
            bytes.append(2)
            appendUInt64(double.bitPattern)
        case .text(let text):
            bytes.append(3)
            appendLength(text.utf8.count, to: &bytes)
            bytes.append(contentsOf: text.utf8)
        case .blob(let data):
            bytes.append(4)
            appendLength(data.count, to: &bytes)
            bytes.append(contentsOf: data)
        }
    }

    /// Bounds-checked reading of a token's body.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var isAtEnd: Bool { index == bytes.count }

        mutating func byte() throws(Refusal) -> UInt8 {
            guard index < bytes.count else { throw Refusal("it is truncated") }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func bytes(_ count: Int) throws(Refusal) -> [UInt8] {
            guard count >= 0, count <= bytes.count - index else { throw Refusal("it is truncated") }
            defer { index += count }
            return Array(bytes[index..<index + count])
        }

        mutating func length() throws(Refusal) -> Int {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try byte()
                guard shift < 63 else { throw Refusal("it has an invalid length") }
                result |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { break }
                shift += 7
            }
            guard result <= UInt64(bytes.count) else { throw Refusal("it is truncated") }
            return Int(result)
        }

        mutating func uint64() throws(Refusal) -> UInt64 {
            var number: UInt64 = 0
            for byte in try bytes(8) { number = number << 8 | UInt64(byte) }
            return number
        }

        mutating func text() throws(Refusal) -> String {
            let utf8 = try bytes(try length())
            guard let text = String(validating: utf8, as: UTF8.self) else { throw Refusal("it holds invalid UTF-8") }
            return text
        }

        mutating func value() throws(Refusal) -> DatabaseValue {
            switch try byte() {
            case 0: return .null
            case 1: return .integer(Int64(bitPattern: try uint64()))
            case 2:
                let double = Double(bitPattern: try uint64())
                guard !double.isNaN else { throw Refusal("it holds NaN") }
                return .real(double)
            case 3: return .text(try text())
            case 4: return .blob(Data(try bytes(try length())))
            default: throw Refusal("it holds an unknown value type")
            }
        }
    }
}
