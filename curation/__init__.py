"""stereoset-eval curation: loaders, pitfall rules, gender swaps, dimension tags, Label Studio."""
