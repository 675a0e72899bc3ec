/// The first word of a statement, read past what may come before it: blanks, opening
/// parentheses and comments (`-- …` to the end of the line, and `/* … */`, nested as
/// PostgreSQL nests them). What a statement does (commits, rolls back, returns rows,
/// changes the schema) is read from that word: a `COMMIT` written after a comment is a
/// commit too.
///
/// For example, `StatementStart.firstWord(of: "-- done\nCOMMIT", limit: 10).word == "commit"`.
package enum StatementStart {
    /// The offset in `bytes`, from `start`, of the first byte that is not a blank, an
    /// opening parenthesis or part of a comment (`bytes.count` when there is none).
    package static func offset(in bytes: UnsafeBufferPointer<UInt8>, from start: Int = 0) -> Int {
        var index = start
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte == 0x20 || byte == UInt8(ascii: "(") || (0x09...0x0D).contains(byte) {
                index += 1
            } else if byte == UInt8(ascii: "-"), index + 1 < count, bytes[index + 1] == UInt8(ascii: "-") {
                index += 2
                while index < count, bytes[index] != 0x0A, bytes[index] != 0x0D { index += 1 }
            } else if byte == UInt8(ascii: "/"), index + 1 < count, bytes[index + 1] == UInt8(ascii: "*") {
                var depth = 1
                index += 2
                while index < count, depth > 0 {
                    let pair = index + 1 < count ? (bytes[index], bytes[index + 1]) : (bytes[index], 0)
                    if pair == (UInt8(ascii: "/"), UInt8(ascii: "*")) {
                        depth += 1
                        index += 2
                    } else if pair == (UInt8(ascii: "*"), UInt8(ascii: "/")) {
                        depth -= 1
                        index += 2
                    } else {
                        index += 1
                    }
                }
            } else {
                break
            }
        }
        return index
    }

    /// The ASCII letters starting at `start` in `bytes`, folded to lower case and packed
    /// in an integer (the first 6 of them, 8 bits each), how many there are, and where
    /// they end.
    package static func packedWord(in bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> (
        packed: Int, length: Int, end: Int
    ) {
        var index = start
        var packed = 0
        while index < bytes.count, isLetter(bytes[index]) {
            if index - start < 6 { packed = packed << 8 | Int(bytes[index] | 0x20) }
            index += 1
        }
        return (packed, index - start, index)
    }

    /// Whether `byte` is an ASCII letter.
    package static func isLetter(_ byte: UInt8) -> Bool {
        let lower = byte | 0x20
        return lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z")
    }

    /// The first word of `sql` in lower case (at most `limit` letters of it), and the
    /// offset in its UTF-8 bytes where the word ends.
    package static func firstWord(of sql: String, limit: Int) -> (word: String, end: Int) {
        var text = sql
        return text.withUTF8 { bytes in
            let start = offset(in: bytes)
            let (_, length, end) = packedWord(in: bytes, at: start)
            let letters = UnsafeBufferPointer(rebasing: bytes[start..<(start + min(length, limit))])
            return (String(decoding: letters.lazy.map { $0 | 0x20 }, as: UTF8.self), end)
        }
    }

    /// Whether the `ROLLBACK` ending at `end` in `sql` rolls back to a savepoint only:
    /// `ROLLBACK [WORK | TRANSACTION] TO [SAVEPOINT] name`, its words read past comments (a
    /// `to` inside a comment after a plain `ROLLBACK` does not count).
    ///
    /// For example, `StatementStart.rollsBackToASavepoint("ROLLBACK WORK TO s", after: 8) == true`.
    package static func rollsBackToASavepoint(_ sql: String, after end: Int) -> Bool {
        var text = sql
        return text.withUTF8 { bytes in
            var index = end
            for _ in 0..<2 {
                let (word, length, wordEnd) = packedWord(in: bytes, at: offset(in: bytes, from: index))
                if length == 2 && word == to { return true }
                guard (length == 4 && word == work) || (length == 11 && word == transaction) else { return false }
                index = wordEnd
            }
            return false
        }
    }

    /// Whether the `ROLLBACK` ending at `end` in `sql` is `ROLLBACK PREPARED 'id'`: it rolls
    /// back a prepared (two-phase) transaction, not the session's.
    ///
    /// For example, `StatementStart.rollsBackAPreparedTransaction("ROLLBACK PREPARED 'x'", after: 8) == true`.
    package static func rollsBackAPreparedTransaction(_ sql: String, after end: Int) -> Bool {
        var text = sql
        return text.withUTF8 { bytes in
            let (word, length, _) = packedWord(in: bytes, at: offset(in: bytes, from: end))
            return length == 8 && word == prepared
        }
    }

    /// `word`'s first six letters (lower case) packed as ``packedWord(in:at:)`` packs them.
    package static func packed(_ word: StaticString) -> Int {
        UnsafeBufferPointer(start: word.utf8Start, count: min(6, word.utf8CodeUnitCount)).reduce(0) {
            $0 << 8 | Int($1)
        }
    }
    private static let to = packed("to")
    private static let work = packed("work")
    private static let transaction = packed("transaction")
    private static let prepared = packed("prepared")

    /// The first word of `sql`, packed as ``packedWord(in:at:)`` packs it; 0 when it is
    /// longer than six letters or there is none.
    package static func packedFirstWord(of sql: String) -> Int {
        var text = sql
        return text.withUTF8 { bytes in
            let (packed, length, _) = packedWord(in: bytes, at: offset(in: bytes))
            return length <= 6 ? packed : 0
        }
    }
}
