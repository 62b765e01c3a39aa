package main

func ChargeCard(amount int) error { return nil }

func main() {}
