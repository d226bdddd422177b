"""stereoset-eval analysis: metrics, correlation, reports, and the command line on top."""
