import SwiftDAL
import Testing

private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// SwiftDAL's own SHA-256 and HMAC-SHA256 (they sign page cursors), against the
/// published test vectors.
@Suite struct SHA256Tests {
    /// FIPS 180-2's examples (appendix B), the one-million-`a` message, and messages
    /// around the padding boundaries (55, 56, 63, 64, 65 bytes…), checked against
    /// Python's hashlib.
    @Test func sha256MatchesTheFIPSExamples() {
        #expect(hex(SHA256.hash(bytes("abc"))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            hex(SHA256.hash(bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            hex(
                SHA256.hash(
                    bytes(
                        "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
                    ))) == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
        #expect(
            hex(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        let boundaries: [Int: String] = [
            55: "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b",
            56: "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27",
            63: "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055",
            64: "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241",
            65: "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e",
            119: "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e",
            120: "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5",
            128: "d2742f1f4ac6bb7ca2b239ee18402ba8b3f9f8e652d2a72973c2b9ba11c08cf6"
        ]
        for (length, digest) in boundaries {
            let message = (0..<length).map { UInt8(($0 * 7 + 3) % 256) }
            #expect(hex(SHA256.hash(message)) == digest, "\(length) bytes")
        }
    }

    /// RFC 4231, test cases 1 to 7 (case 5 compares the first 128 bits, as the RFC does).
    @Test func hmacSHA256MatchesRFC4231() {
        func mac(_ key: [UInt8], _ data: [UInt8]) -> String { hex(HMACSHA256.authenticationCode(for: data, key: key)) }
        #expect(
            mac([UInt8](repeating: 0x0b, count: 20), bytes("Hi There"))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            mac(bytes("Jefe"), bytes("what do ya want for nothing?"))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            mac([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50))
                == "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe")
        #expect(
            mac(Array(1...25), [UInt8](repeating: 0xcd, count: 50))
                == "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b")
        #expect(
            mac([UInt8](repeating: 0x0c, count: 20), bytes("Test With Truncation")).prefix(32)
                == "a3b6167473100ee06e0c796c2955552b")
        let longKey = [UInt8](repeating: 0xaa, count: 131)
        #expect(
            mac(longKey, bytes("Test Using Larger Than Block-Size Key - Hash Key First"))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        #expect(
            mac(
                longKey,
                bytes(
                    "This is a test using a larger than block-size key and a larger than block-size data. "
                        + "The key needs to be hashed before being used by the HMAC algorithm."))
                == "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
        #expect(HMACSHA256.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!HMACSHA256.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!HMACSHA256.constantTimeEquals([1, 2, 3], [1, 2]))
    }
}
