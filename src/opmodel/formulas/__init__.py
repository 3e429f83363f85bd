"""Pure equations: FLOPs, compulsory bytes, roofline times and energy; one quantity per function."""
