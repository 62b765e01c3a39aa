export class OrdersClient {
  createOrder(sku: string) { return { sku }; }
}
