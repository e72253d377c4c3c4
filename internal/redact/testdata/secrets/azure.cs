var conn = "DefaultEndpointsProtocol=https;AccountName=demo;AccountKey=9f9lI0lqe78u1tmqop0Yg/Z/hUJAX5zF89lYiQP/Mr0PpYd2T+7ZGjTcAzJ2uB9BT0s5Ai2romrvRV7xo1lSjw==;EndpointSuffix=core.windows.net";
var sas = "https://demo.blob.core.windows.net/c?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01&sig=6kJRbiVnfdnbq14TCwwJXT6egTATB8ldpKjGK2AxSQm%3D";
var clientSecret = "5Ow8Q~-0euOJ6LK32nhTC0HU5Vi0-xipP2~cN3kX";
