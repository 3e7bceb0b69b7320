import FuzzSupport

/// The entry point of a plain build (no libFuzzer): replays inputs, or writes the seed corpus.
/// See `FuzzReplay` for why it is named after the module.
@_cdecl("fuzz_checkpoint_main")
func fuzzCheckpointMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
  FuzzReplay.run(
    arguments: FuzzReplay.arguments(argc, argv), test: CheckpointTarget.test, seeds: CheckpointTarget.seeds)
}
