/// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), written out here because Linux has
/// no CryptoKit and SwiftDAL takes no dependencies. They sign keyset-paging cursors and a
/// cluster's consistency tokens;
/// the tests check them against the FIPS 180 examples and RFC 4231's test cases.
///
/// For example, `SHA256.hash(Array("abc".utf8))` is `ba7816bf…f20015ad`.
package enum SHA256 {
    /// The digest length, in bytes.
    package static let digestLength = 32
    /// The block length, in bytes (what HMAC pads its key to).
    package static let blockLength = 64

    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2
    ]

    private static let initialState: [UInt32] = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
    ]

    /// The SHA-256 digest of `message` (32 bytes).
    ///
    /// For example, `SHA256.hash([])` is `e3b0c442…7852b855`.
    package static func hash(_ message: some Collection<UInt8>) -> [UInt8] {
        var state = initialState
        var block = [UInt8]()
        block.reserveCapacity(blockLength)
        var schedule = [UInt32](repeating: 0, count: 64)
        for byte in message {
            block.append(byte)
            if block.count == blockLength {
                compress(&state, block, &schedule)
                block.removeAll(keepingCapacity: true)
            }
        }
        // Padding: a 1 bit, zeros, and the message length in bits (big-endian, 64 bits).
        let bitLength = UInt64(message.count) &* 8
        block.append(0x80)
        if block.count > blockLength - 8 {
            block.append(contentsOf: repeatElement(0, count: blockLength - block.count))
            compress(&state, block, &schedule)
            block.removeAll(keepingCapacity: true)
        }
        block.append(contentsOf: repeatElement(0, count: blockLength - 8 - block.count))
        for shift in stride(from: 56, through: 0, by: -8) {
            block.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        compress(&state, block, &schedule)
        var digest = [UInt8]()
        digest.reserveCapacity(digestLength)
        for word in state {
            for shift in stride(from: 24, through: 0, by: -8) {
                digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift)))
            }
        }
        return digest
    }

    /// Processes one 64-byte block.
    private static func compress(_ state: inout [UInt32], _ block: [UInt8], _ w: inout [UInt32]) {
        for t in 0..<16 {
            w[t] =
                UInt32(block[4 * t]) << 24 | UInt32(block[4 * t + 1]) << 16 | UInt32(block[4 * t + 2]) << 8
                | UInt32(block[4 * t + 3])
        }
        for t in 16..<64 {
            let s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
            let s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var a = state[0]
        var b = state[1]
        var c = state[2]
        var d = state[3]
        var e = state[4]
        var f = state[5]
        var g = state[6]
        var h = state[7]
        for t in 0..<64 {
            let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
            let choice = (e & f) ^ (~e & g)
            let temp1 = h &+ s1 &+ choice &+ roundConstants[t] &+ w[t]
            let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let temp2 = s0 &+ majority
            h = g
            g = f
            f = e
            e = d &+ temp1
            d = c
            c = b
            b = a
            a = temp1 &+ temp2
        }
        state[0] &+= a
        state[1] &+= b
        state[2] &+= c
        state[3] &+= d
        state[4] &+= e
        state[5] &+= f
        state[6] &+= g
        state[7] &+= h
    }

    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 {
        (x >> n) | (x << (32 - n))
    }
}

/// HMAC-SHA256 (RFC 2104): a message authentication code keyed by a secret.
///
/// For example, `HMACSHA256.authenticationCode(for: Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))`
/// is `5bdcc146…64ec3843` (RFC 4231, test case 2).
package enum HMACSHA256 {
    /// The 32-byte code of `message` under `key` (a key longer than 64 bytes is hashed
    /// first, as RFC 2104 says).
    package static func authenticationCode(for message: some Collection<UInt8>, key: some Collection<UInt8>) -> [UInt8]
    {
        var block = key.count > SHA256.blockLength ? SHA256.hash(key) : Array(key)
        block.append(contentsOf: repeatElement(0, count: SHA256.blockLength - block.count))
        var inner = block.map { $0 ^ 0x36 }
        inner.append(contentsOf: message)
        var outer = block.map { $0 ^ 0x5c }
        outer.append(contentsOf: SHA256.hash(inner))
        return SHA256.hash(outer)
    }

    /// Whether two codes are equal, in time that depends only on their length (so that
    /// a forger learns nothing from how long a refusal took).
    package static func constantTimeEquals(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
