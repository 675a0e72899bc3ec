// swiftdal-fuzz: libFuzzer targets for SwiftDAL. Build and run (see the README):
//   swift build -c release --product swiftdal-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
//   .build/release/swiftdal-fuzz --target=condition Tests/Reliability/swiftdal-fuzz/corpus/condition -max_total_time=60
// Targets: condition, values, statement. Without -DFUZZING this program only explains itself.
import Foundation

#if FUZZING
    import CSwiftDALFuzzSupport

    nonisolated(unsafe) var selectedTarget: (Data) throws -> Void = fuzzCondition

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
        let data = bytes.map { Data(bytes: $0, count: count) } ?? Data()
        do {
            try selectedTarget(data)
        } catch {
            // Errors from setting up the fixture itself (not from fuzzed input) must be typed too.
            if !isTyped(error) { violation("untyped error \(error)") }
        }
        return 0
    }

    var arguments = CommandLine.arguments
    if let flag = arguments.firstIndex(where: { $0.hasPrefix("--target=") }) {
        switch arguments[flag].dropFirst("--target=".count) {
        case "condition": selectedTarget = fuzzCondition
        case "values": selectedTarget = fuzzValues
        case "statement": selectedTarget = fuzzStatement
        default:
            FileHandle.standardError.write(Data("unknown target; use condition, values or statement\n".utf8))
            exit(2)
        }
        arguments.remove(at: flag)
    }
    var argc = CInt(arguments.count)
    var cStrings = arguments.map { strdup($0) } + [nil]
    let status = cStrings.withUnsafeMutableBufferPointer { buffer -> CInt in
        var argv = buffer.baseAddress
        return LLVMFuzzerRunDriver(&argc, &argv, { data, size in fuzzOneInput(data, size) })
    }
    exit(status)
#else
    print(
        "swiftdal-fuzz does nothing in a normal build: build it with -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING"
    )
#endif
