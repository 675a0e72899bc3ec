import Testing

@testable import SwiftDALConnection
@testable import SwiftDALEntity

/// Sizes the row-reading hot path depends on. A Codable entity is decoded through an
/// `any Decoder` whose inline buffer holds three words: a larger decoder is boxed on the
/// heap once per row (it made `getAll` of Codable entities ×1.25 slower when the row view
/// grew to hold another engine's result beside the SQLite statement; a decoder that also
/// held the entity's type cost 4% more instructions on W2).
@Suite struct LayoutTests {
    @Test func aRowViewAndTheCodableDecoderAreThreeWords() {
        // The engine's rows (an existential: the object and its witness table) and the row.
        #expect(MemoryLayout<RowView>.size == 3 * MemoryLayout<Int>.size)
        #expect(MemoryLayout<RowDecoder>.size <= 3 * MemoryLayout<Int>.size)
    }
}
