import Foundation

/// Strings made from the text bytes an engine hands over (SQLite's text, libpq's values,
/// MariaDB's result buffers), checked to be valid UTF-8: every engine reads text through
/// these, once per text value of every row.
///
/// A namespace without cases: its functions are called without a metatype (a class's
/// static function needed its type's metadata at every call: ~8 instructions a row of
/// W2 on PostgreSQL, callgrind).
package enum UTF8Text {
    /// The string of the `count` bytes at `text`, which end with a NUL (SQLite's text,
    /// libpq's values), or `nil` when they are not valid UTF-8. The C-string initializer
    /// validates and copies in one pass (the standard library's own non-generic
    /// validation, without the repair pass `String(decoding:)` makes and
    /// ``string(_:)`` then checks for); text with a NUL inside (the C string ends early) or
    /// not valid takes ``string(_:)``. Callgrind, W2 on SQLite: −58 instructions a row of
    /// three strings.
    @inlinable @inline(__always)
    package static func string(nulTerminated text: UnsafePointer<UInt8>, count: Int) -> String? {
        if let string = String(validatingCString: UnsafeRawPointer(text).assumingMemoryBound(to: CChar.self)),
            string.utf8.count == count
        {
            return string
        }
        return string(UnsafeBufferPointer(start: text, count: count))
    }

    /// The string of `bytes`, or `nil` when they are not valid UTF-8. `String(decoding:)`
    /// is the fast path but repairs invalid input; a repaired string never has the same
    /// bytes as its input, so comparing them tells the two apart.
    /// (`String(validating:as:)`, one pass, measured ×1.5 the instructions of the whole
    /// W2 fetch with callgrind on Swift 6.3: its generic path is not specialized here.)
    @usableFromInline
    package static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        if isASCII(bytes) { return asciiString(bytes) }  // ASCII never needs repair
        var string = String(decoding: bytes, as: UTF8.self)
        let identical = string.withUTF8 { decoded in
            guard decoded.count == bytes.count else { return false }
            guard let left = decoded.baseAddress, let right = bytes.baseAddress else { return true }  // both empty
            return memcmp(left, right, bytes.count) == 0
        }
        return identical ? string : nil
    }

    /// The string of `bytes`, all ASCII.
    @inline(__always)
    private static func asciiString(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return "" }
        guard bytes.count <= 15 else { return String(decoding: bytes, as: UTF8.self) }
        return String(unsafeUninitializedCapacity: bytes.count) { buffer in
            guard let target = buffer.baseAddress else { return 0 }
            target.update(from: source, count: bytes.count)
            return bytes.count
        }
    }

    /// Whether every byte is below 0x80, checked eight bytes at a time (the last eight
    /// overlapping the previous ones, so that no byte loop runs for 8 bytes or more).
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        let count = bytes.count
        let high: UInt64 = 0x8080_8080_8080_8080
        guard count >= 8 else {
            var merged: UInt8 = 0
            for index in 0..<count { merged |= bytes[index] }
            return merged < 0x80
        }
        var merged: UInt64 = 0
        var offset = 0
        while offset + 8 <= count {
            merged |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        merged |= raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        return merged & high == 0
    }
}
